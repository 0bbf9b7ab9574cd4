/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- test code, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import axios from 'axios';
import nodeFetch from 'node-fetch';
import { abortableSleep, keyOnlyForApi, lowerCaseHeaders, mayCarryApiKey, responseBody, transportFailureKind } from '../../core/http/hostKit';
import { MAX_JSON_RESPONSE_BYTES } from '../../core/http/transport';
import type { Transport } from '../../core/http/transport';

describe('the one rule for where the API key goes', () => {
	const base = 'https://api.omni.example';

	it.each([`${base}/api/v1/generate`, `${base}/api/v1/jobs/job_1`, `${base}/api/upload`, `${base}/api/upload?x=1`])(
		'the API path %s gets the key',
		(url) => {
			expect(mayCarryApiKey(url, base)).toBe(true);
			expect(mayCarryApiKey(url, `${base}/`)).toBe(true);
		},
	);

	it.each([
		'https://uploads.omni.example/api/put?signature=x',
		`${base}/__uploads/upl_1?signature=x`,
		`${base}/omni/acct/job_1/output.mp4`,
		`${base}/api`,
		`${base}/apis/v1/generate`,
		'https://api.omni.example.attacker.invalid/api/v1/generate',
		'https://api.omni.example:8443/api/v1/generate',
		'http://api.omni.example/api/v1/generate',
		'https://zapier.com/engine/hydrate/1/abc/',
		'',
	])('%s does not', (url) => {
		expect(mayCarryApiKey(url, base)).toBe(false);
	});

	it('nothing gets the key when there is no base URL', () => {
		expect(mayCarryApiKey(`${base}/api/v1/generate`, '')).toBe(false);
		expect(mayCarryApiKey(undefined, base)).toBe(false);
	});

	it("a transport's api side refuses any other URL before the host sends it", async () => {
		const sent: string[] = [];
		const record: Transport['api'] = async (request) => {
			sent.push(request.url);
			return { status: 200, headers: {}, body: undefined };
		};
		const guarded = keyOnlyForApi({ api: record, plain: record }, base);
		await guarded.api({ method: 'GET', url: `${base}/api/v1/jobs/job_1` });
		await expect(guarded.api({ method: 'GET', url: `${base}/omni/output.mp4?sig=1` })).rejects.toThrow(
			`Refusing to send the API key to ${base}/omni/output.mp4`,
		);
		await guarded.plain({ method: 'GET', url: `${base}/omni/output.mp4` });
		expect(sent).toEqual([`${base}/api/v1/jobs/job_1`, `${base}/omni/output.mp4`]);
	});
});

/** A local server whose every connection is handled by `onRequest`. */
async function server(onRequest: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
	const instance = http.createServer(onRequest);
	await new Promise<void>((resolve) => instance.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(instance.address() as AddressInfo).port}`,
		close: () =>
			new Promise<void>((resolve) => {
				instance.closeAllConnections();
				instance.close(() => resolve());
			}),
	};
}

/** A port nothing listens on: one a server had, closed again. */
async function closedPort(): Promise<string> {
	const gone = await server(() => undefined);
	await gone.close();
	return gone.url;
}

const failureOf = (request: Promise<unknown>) => request.then(() => 'answered', transportFailureKind);

describe('how a client library request failed, from its real errors', () => {
	let silent: Awaited<ReturnType<typeof server>>;
	let hangUp: Awaited<ReturnType<typeof server>>;
	beforeAll(async () => {
		silent = await server(() => undefined);
		hangUp = await server((request) => request.socket.destroy());
	});
	afterAll(async () => {
		await silent.close();
		await hangUp.close();
	});

	it('refused', async () => {
		const url = await closedPort();
		expect(await failureOf(axios.get(url))).toBe('refused');
		expect(await failureOf(fetch(url))).toBe('refused');
		expect(await failureOf(nodeFetch(url))).toBe('refused');
	});

	it('timed out', async () => {
		expect(await failureOf(axios.get(silent.url, { timeout: 50 }))).toBe('timeout');
		expect(await failureOf(nodeFetch(silent.url, { timeout: 50 }))).toBe('timeout');
	});

	it('reset', async () => {
		expect(await failureOf(axios.get(hangUp.url))).toBe('reset');
		expect(await failureOf(nodeFetch(hangUp.url))).toBe('reset');
	});

	it('aborted', async () => {
		const abort = () => {
			const controller = new AbortController();
			setImmediate(() => controller.abort());
			return controller.signal;
		};
		expect(await failureOf(axios.get(silent.url, { signal: abort() }))).toBe('aborted');
		expect(await failureOf(fetch(silent.url, { signal: abort() }))).toBe('aborted');
	});

	it('anything else', () => {
		expect(transportFailureKind(new Error('certificate has expired'))).toBe('other');
		expect(transportFailureKind(undefined)).toBe('other');
		expect(transportFailureKind({ code: 'constructor' })).toBe('other');
	});
});

describe('response headers and bodies as core reads them', () => {
	it('header names in lower case, from a plain object or a fetch Headers', () => {
		expect(lowerCaseHeaders({ 'Content-Type': 'application/json', 'Set-Cookie': ['a=1', 'b=2'], 'X-Gone': undefined })).toEqual({
			'content-type': 'application/json',
			'set-cookie': 'a=1, b=2',
		});
		expect(lowerCaseHeaders(new Headers({ 'Retry-After': '5' }))).toEqual({ 'retry-after': '5' });
		expect(lowerCaseHeaders(undefined)).toEqual({});
	});

	it('a stream, bytes or text: JSON when it parses, else the text, nothing for an empty body', async () => {
		const json = '{"id":"job_1","prompt":"été"}';
		const bytes = Buffer.from(json);
		// A character split across two chunks still decodes.
		expect(await responseBody(Readable.from([bytes.subarray(0, 24), bytes.subarray(24)]))).toEqual({ id: 'job_1', prompt: 'été' });
		expect(await responseBody(new Uint8Array(bytes))).toEqual({ id: 'job_1', prompt: 'été' });
		expect(await responseBody('<html>')).toBe('<html>');
		expect(await responseBody(Readable.from([]))).toBeUndefined();
		expect(await responseBody({ already: 'parsed' })).toEqual({ already: 'parsed' });
	});

	it('a stream past the cap is refused, by its declared length or as it is read', async () => {
		const huge = () => Readable.from([Buffer.alloc(MAX_JSON_RESPONSE_BYTES), Buffer.alloc(10)]);
		await expect(responseBody(huge())).rejects.toMatchObject({ failure: 'malformed', code: 'response_too_large' });
		await expect(responseBody(Readable.from([]), String(MAX_JSON_RESPONSE_BYTES + 1))).rejects.toMatchObject({
			code: 'response_too_large',
		});
	});
});

describe('the abortable sleep on the host timers', () => {
	/** Timers that run when told to, and say which are still set. */
	function manualTimers() {
		const pending = new Map<number, () => void>();
		let next = 0;
		return {
			pending,
			start: (callback: () => void) => {
				pending.set(++next, callback);
				return next;
			},
			cancel: (handle: number) => {
				pending.delete(handle);
			},
			fireAll: () => {
				for (const [handle, callback] of [...pending]) {
					pending.delete(handle);
					callback();
				}
			},
		};
	}

	it('resolves when its timer fires', async () => {
		const timers = manualTimers();
		const slept = abortableSleep(timers)(1_000);
		timers.fireAll();
		await expect(slept).resolves.toBeUndefined();
	});

	it('an abort rejects with the reason and clears the timer', async () => {
		const timers = manualTimers();
		const controller = new AbortController();
		const slept = abortableSleep(timers)(60_000, controller.signal);
		expect(timers.pending.size).toBe(1);
		controller.abort(new Error('stopped'));
		await expect(slept).rejects.toThrow('stopped');
		expect(timers.pending.size).toBe(0);
	});

	it('an already aborted signal sets no timer', async () => {
		const timers = manualTimers();
		await expect(abortableSleep(timers)(1_000, AbortSignal.abort(new Error('before')))).rejects.toThrow('before');
		expect(timers.pending.size).toBe(0);
	});
});
