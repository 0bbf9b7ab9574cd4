import { canonicalJson, derivedIdempotencyKey } from '../../core';

describe('canonicalJson', () => {
	it('gives the same text for the same input whatever the order of its fields, undefined fields left out', () => {
		const a = canonicalJson({ prompt: 'A kite', resolution: '720P', nested: { b: 2, a: [1, { d: 4, c: 3 }] }, gone: undefined });
		const b = canonicalJson({ nested: { a: [1, { c: 3, d: 4 }], b: 2 }, resolution: '720P', prompt: 'A kite' });
		expect(a).toBe(b);
		expect(a).toBe('{"nested":{"a":[1,{"c":3,"d":4}],"b":2},"prompt":"A kite","resolution":"720P"}');
	});

	it('tells different inputs apart, so their derived keys differ', () => {
		const key = (input: unknown) => derivedIdempotencyKey('host', 'run', canonicalJson(input));
		expect(key({ prompt: 'A kite', duration: 4 })).toBe(key({ duration: 4, prompt: 'A kite' }));
		expect(key({ prompt: 'A kite', duration: 4 })).not.toBe(key({ prompt: 'A kite', duration: '4' }));
		expect(key([1, 2])).not.toBe(key([2, 1]));
	});
});
