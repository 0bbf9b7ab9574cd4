/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test tooling, never shipped */
import { inspect } from 'node:util';
import { startSandbox, type Sandbox } from '../../sandbox';
import { ECHO_ENCODINGS } from '../../sandbox/echo';
import { PLANS } from '../../core/types';
import { TransportError, ValidationError } from '../../core/errors/errors';
import { MAX_JSON_RESPONSE_BYTES } from '../../core/http/transport';
import type { GenerateVideoInput } from '../../core/types';
import { sandboxClient } from '../support/sandboxClient';

/** A key holding every character that encodings change: + / = and a space. */
const KEY = 'sk_live+Ab/9xY=z w==';
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a3ba5c2c0000000049454e44ae426082', 'hex');

let sandbox: Sandbox;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: 200, hugeAnswerBytes: 200 * 1024 * 1024 });
});
afterAll(() => sandbox.close());

function client(scenarios: string[] = [], echo?: string) {
	const key = `${KEY}#${Math.random().toString(36).slice(2, 8)}`;
	sandbox.accounts.addKey({ key, account: 'acct_premium', scenarios, echo });
	return { key, client: sandboxClient(sandbox.url, key, PLANS.premium, { conformanceCheck: false }) };
}

/** Every view of a value a user or a log could see. */
function views(value: unknown): string {
	return [String(value), inspect(value, { depth: 10, showHidden: true }), JSON.stringify(value)].join('\n');
}

describe('the key never reaches an error, in any encoding the service echoes it in', () => {
	it.each(Object.keys(ECHO_ENCODINGS))('%s, on a lookup and on a create', async (encoding) => {
		const { key, client: c } = client(['echo-key'], encoding);
		const echoed = ECHO_ENCODINGS[encoding as keyof typeof ECHO_ENCODINGS](key);
		for (const error of [
			await c.getJob('job_x').catch((e: unknown) => e),
			await c.generateVideo({ prompt: 'a fox' }).catch((e: unknown) => e),
		]) {
			expect(error).toMatchObject({ kind: 'auth', status: 403 });
			const seen = views(error);
			expect(seen).toContain('[redacted]');
			expect(seen).not.toContain(echoed);
			expect(seen).not.toContain(key);
			expect(seen).not.toContain('Ab/9xY');
		}
	});
});

describe('answers larger than the cap', () => {
	it('a 200 MB job record fails as response_too_large with the job id, without reading it whole', async () => {
		const { client: c } = client(['huge-answer']);
		const created = await sandboxClient(sandbox.url, sandbox.keys.premium, PLANS.premium).generateVideo({ prompt: 'big' });
		const before = process.memoryUsage().rss;
		const error = await c.getJob(created.job.id).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(TransportError);
		expect(error).toMatchObject({ failure: 'malformed', code: 'response_too_large', jobId: created.job.id });
		expect((error as Error).message).toMatch(/larger than expected/);
		expect((error as Error).message).toContain(created.job.id);
		// Read whole, the answer would add 200 MB or more; capped, a few times the cap at most.
		expect(process.memoryUsage().rss - before).toBeLessThan(40 * MAX_JSON_RESPONSE_BYTES);
		// Not retried: the next answer would be as large.
		expect(sandbox.journal.filter((entry) => entry.path === `/api/v1/jobs/${created.job.id}`)).toHaveLength(1);
	});
});

describe('input refused before any request', () => {
	it.each<[string, unknown]>([
		['null', null],
		['undefined', undefined],
		['a string', 'a fox'],
		['an array', ['a fox']],
	])('generateVideo(%s) is a validation error', async (_what, input) => {
		const before = sandbox.journal.length;
		const error = await client().client.generateVideo(input as GenerateVideoInput).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ValidationError);
		expect((error as ValidationError).problems[0].field).toBe('input');
		expect(sandbox.journal.length).toBe(before);
	});

	it('uploadFile(null) is a validation error', async () => {
		const error = await client().client.uploadFile(null as never).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ValidationError);
	});

	it.each(['imageUrl', 'videoUrl', 'callbackUrl'])('a 2 MB %s names that field, not a file', async (field) => {
		const before = sandbox.journal.length;
		const long = `https://files.example.com/${'a'.repeat(2 * 1024 * 1024)}.png`;
		const error = (await client()
			.client.generateVideo({ prompt: 'a fox', [field]: long })
			.catch((e: unknown) => e)) as ValidationError;
		expect(error).toBeInstanceOf(ValidationError);
		expect(error.problems.map((p) => p.field)).toEqual([field]);
		expect(error.message).not.toMatch(/file is too large/);
		expect(sandbox.journal.length).toBe(before);
	});
});

describe('a create cancelled after it was sent', () => {
	it('names the idempotency key, and rerunning with it gives the job the service made', async () => {
		const { client: c } = client(['slow-response']);
		const controller = new AbortController();
		setTimeout(() => controller.abort(new Error('stopped')), 50);
		const error = await c.generateVideo({ prompt: 'a fox' }, { idempotencyKey: 'idem_cancelled', signal: controller.signal }).catch((e: unknown) => e);
		expect(error).toMatchObject({ idempotencyKey: 'idem_cancelled' });
		expect((error as Error).message).toMatch(/may or may not have been created.*idem_cancelled/);
	});
});

describe('upload PUT redirects', () => {
	it('307 then 308: the same bytes reach the final address, and the file is stored', async () => {
		const { client: c } = client(['upload-redirect']);
		const uploaded = await c.uploadFile({ filename: 'frame.png', contentType: 'image/png', data: PNG });
		const stored = Buffer.from(await (await fetch(uploaded.fileUrl)).arrayBuffer());
		expect(stored.equals(PNG)).toBe(true);
	});

	it('a redirect loop ends after a few hops with an error naming the storage service', async () => {
		const { client: c } = client(['upload-redirect-loop']);
		const error = await c.uploadFile({ filename: 'frame.png', contentType: 'image/png', data: PNG }).catch((e: unknown) => e);
		expect(error).toMatchObject({ kind: 'service', status: 307 });
		expect((error as Error).message).toMatch(/storage service.*redirected more than 5 times/s);
	});
});
