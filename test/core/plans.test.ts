import { planOfRateLimit } from '../../core/jobs/credentialCheck';

describe('planOfRateLimit', () => {
	it('names the plan whose minute or hour window the header gives', () => {
		expect(['30', '200', '60', '500'].map(planOfRateLimit)).toEqual(['pro', 'pro', 'premium', 'premium']);
	});

	it('names none for other values or no header', () => {
		expect([undefined, '', '45', 'many'].map(planOfRateLimit)).toEqual([undefined, undefined, undefined, undefined]);
	});
});
