/* eslint-disable no-console, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- a command-line fault matrix run by people and CI, never shipped */
/**
 * The project's fault matrix (`npm run test:faults`): core on the plain Node host against the
 * sandbox, under every fault the sandbox can inject. Outcomes are counted from the sandbox's own
 * records (its admin API: journal, jobs, keys), never from what the client says happened.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { startSandbox, type Sandbox } from '../../sandbox';
import { ECHO_ENCODINGS } from '../../sandbox/echo';
import { createOmniVideoClient, type OmniVideoClient } from '../../core/client';
import { createAxiosTransport } from '../../node-host/axiosTransport';
import { realSleep, systemClock } from '../../node-host/runtime';
import { PLANS, type GenerateVideoInput, type UploadFileInput } from '../../core/types';
import { OmniVideoError, ValidationError } from '../../core/errors/errors';
import { signWebhook } from '../../core/callbacks/signature';
import type { Clock, Sleep } from '../../core/http/transport';
import { BAD_GENERATE_INPUTS, BAD_JOB_IDS, BAD_UPLOADS } from './inputs';
import { HOSTILE_REQUESTS, sendRaw } from './hostileHttp';

/** Sandbox and client share one virtual time running this much faster than real time. */
const SPEED = 50;
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a3ba5c2c0000000049454e44ae426082', 'hex');
const FOX: GenerateVideoInput = { prompt: 'A fox in the snow', resolution: '720P', duration: 4 };

const counts = { passed: 0, failed: 0, lost: 0, duplicates: 0, forged: 0, leaks: 0, refused: 0, serverErrors: 0 };
const failures: string[] = [];

let sandbox: Sandbox;
let keySeq = 0;

interface AdminJob {
	id: string;
	key: string;
	status: string;
}

async function admin<T>(path: string, body?: unknown): Promise<T> {
	const response = await fetch(`${sandbox.url}/__sandbox/${path}`, {
		method: body === undefined ? 'GET' : 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	if (response.status >= 300) throw new Error(`admin ${path} answered ${response.status}`);
	return (await response.json()) as T;
}

/** A key of its own for one case (its label names the case), with + / = for the encodings. */
async function newKey(label: string, options: { scenarios?: string[]; account?: string; budget?: number; revoked?: boolean; echo?: string } = {}): Promise<string> {
	const key = `fm+${++keySeq}/${label.replace(/\W+/g, '_')}==`;
	await admin('keys', { key, label, account: options.account ?? 'acct_premium', ...options });
	return key;
}

/** The fault is over: the same key (same account, same idempotency scope) without scenarios. */
async function recover(key: string, label: string, account = 'acct_premium'): Promise<void> {
	await admin('keys', { key, label, account });
}

// The client's clock is the sandbox's virtual clock: signatures, Retry-After and render times agree.
const clock: Clock = { now: () => sandbox.clock.now() };
const sleep: Sleep = (ms, signal) => realSleep(ms / SPEED, signal);

function clientFor(key: string, baseUrl = sandbox.url, time: { clock: Clock; sleep: Sleep } = { clock, sleep }): OmniVideoClient {
	return createOmniVideoClient({
		baseUrl,
		transport: createAxiosTransport({ apiKey: key }),
		clock: time.clock,
		sleep: time.sleep,
		random: Math.random,
		limits: PLANS.premium,
		// A limiter counts on one clock: a client on the real clock (receiving callbacks) is a process of its own.
		limiterKey: `faults:${key}${time.clock === clock ? '' : ':real-clock'}`,
		redact: [key],
	});
}

async function jobsOf(label: string): Promise<AdminJob[]> {
	return (await admin<AdminJob[]>('jobs')).filter((job) => job.key === label);
}

async function journalLength(): Promise<number> {
	return (await admin<unknown[]>('requests')).length;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

async function attempt<T>(run: () => Promise<T>): Promise<Outcome<T>> {
	try {
		return { ok: true, value: await run() };
	} catch (error) {
		return { ok: false, error };
	}
}

/** Every way the key could show in what the client handed back, in every encoding. */
function countLeaks(outcome: unknown, key: string): void {
	const views = [String((outcome as { error?: unknown }).error ?? ''), inspect(outcome, { depth: 12, showHidden: true }), safeJson(outcome)].join('\n');
	// `query` wraps the URL encoding in an address: the encoding itself is the one to look for.
	const forms = Object.entries(ECHO_ENCODINGS)
		.filter(([name]) => name !== 'query')
		.map(([, encode]) => encode(key));
	if (forms.some((form) => views.includes(form))) counts.leaks++;
}

function safeJson(value: unknown): string {
	try {
		return JSON.stringify(value, (_k, v: unknown) => (v instanceof Error ? { ...v, message: v.message } : v));
	} catch {
		return '';
	}
}

function errorText(outcome: Outcome<unknown>): string {
	return outcome.ok ? '' : outcome.error instanceof Error ? `${outcome.error.message} ${safeJson(outcome.error)}` : String(outcome.error);
}

async function check(name: string, run: () => Promise<void>): Promise<void> {
	try {
		await run();
		counts.passed++;
	} catch (error) {
		counts.failed++;
		failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
	}
}

function expect(condition: boolean, what: string): void {
	if (!condition) throw new Error(what);
}

/**
 * One create under a fault: afterwards the sandbox holds at most one job, the user can find it
 * (the job id in the answer, or the idempotency key in the error), and the rerun the error
 * advises (same idempotency key, once the fault is over) yields that same job, not a second one.
 */
async function createUnderFault(scenario: string, expected: { jobs: 0 | 1; ok: boolean; signalAfterMs?: number }): Promise<void> {
	const label = `create:${scenario}${expected.signalAfterMs === undefined ? '' : ':aborted'}`;
	await check(label, async () => {
		const key = await newKey(label, { scenarios: scenario === 'none' ? [] : [scenario] });
		const client = clientFor(key);
		const idempotencyKey = `idem_${scenario}_${keySeq}`;
		const controller = new AbortController();
		if (expected.signalAfterMs !== undefined) setTimeout(() => controller.abort(new Error('stopped by the user')), expected.signalAfterMs);
		const outcome = await attempt(() => client.generateVideo(FOX, { idempotencyKey, signal: controller.signal }));
		countLeaks(outcome, key);
		// Faults that hold or cut the answer finish on the sandbox a moment later.
		await realSleep(400);
		let jobs = await jobsOf(label);
		if (jobs.length > 1) counts.duplicates += jobs.length - 1;
		expect(outcome.ok === expected.ok, `expected ${expected.ok ? 'success' : 'an error'}, got ${outcome.ok ? 'success' : errorText(outcome)}`);
		expect(outcome.ok || outcome.error instanceof OmniVideoError, `not an Omni Video error: ${errorText(outcome)}`);
		expect(jobs.length === expected.jobs, `expected ${expected.jobs} job(s) on the sandbox, found ${jobs.length}`);
		if (jobs.length === 1) {
			const findable = outcome.ok ? outcome.value.job.id === jobs[0].id : errorText(outcome).includes(idempotencyKey) || errorText(outcome).includes(jobs[0].id);
			if (!findable) counts.lost++;
			expect(findable, `the job ${jobs[0].id} is named neither by the answer nor by the error: ${errorText(outcome)}`);
		}
		if (outcome.ok) return;
		// The advised rerun with the same key is safe only where the service honours keys (the error
		// says so): on a service that ignores them (--service spec) it would be the user's second job.
		if (jobs.length === 1 && sandbox.service.switches.idempotencyKeys === 'ignored') return;
		await recover(key, label);
		const rerun = await attempt(() => clientFor(key).generateVideo(FOX, { idempotencyKey }));
		countLeaks(rerun, key);
		jobs = await jobsOf(label);
		if (jobs.length > 1) counts.duplicates += jobs.length - 1;
		expect(rerun.ok, `the rerun with the same idempotency key failed: ${errorText(rerun)}`);
		if (rerun.ok && expected.jobs === 1 && rerun.value.job.id !== jobs[0].id) {
			counts.lost++;
			throw new Error(`the rerun returned ${rerun.value.job.id}, not the job ${jobs[0].id} the first request created`);
		}
	});
}

/** A lookup of an existing job under a fault: the job or a clear error naming it, never a crash. */
async function lookupUnderFault(jobId: string, scenario: string, ok: boolean): Promise<void> {
	const label = `lookup:${scenario}`;
	await check(label, async () => {
		const key = await newKey(label, { scenarios: [scenario] });
		const outcome = await attempt(() => clientFor(key).getJob(jobId));
		countLeaks(outcome, key);
		expect(outcome.ok === ok, `expected ${ok ? 'the job' : 'an error'}, got ${outcome.ok ? 'the job' : errorText(outcome)}`);
		if (outcome.ok) expect(outcome.value.id === jobId, 'another job came back');
		else {
			expect(outcome.error instanceof OmniVideoError, `not an Omni Video error: ${errorText(outcome)}`);
			if (scenario !== 'echo-key') expect(errorText(outcome).includes(jobId), 'the error does not name the job');
		}
	});
}

async function uploadUnderFault(scenario: string, ok: boolean): Promise<void> {
	const label = `upload:${scenario}`;
	await check(label, async () => {
		const key = await newKey(label, { scenarios: scenario === 'none' ? [] : [scenario] });
		const outcome = await attempt(() => clientFor(key).uploadFile({ filename: 'frame.png', contentType: 'image/png', data: PNG }));
		countLeaks(outcome, key);
		expect(outcome.ok === ok, `expected ${ok ? 'an upload' : 'an error'}, got ${outcome.ok ? 'an upload' : errorText(outcome)}`);
		if (outcome.ok) {
			// The sandbox's stored file is the proof, not the client's word.
			const stored = Buffer.from(await (await fetch(outcome.value.fileUrl)).arrayBuffer());
			expect(stored.equals(PNG), 'the stored file differs from the bytes sent');
		} else expect(outcome.error instanceof OmniVideoError, `not an Omni Video error: ${errorText(outcome)}`);
	});
}

async function refusedBeforeRequest(name: string, run: (client: OmniVideoClient) => Promise<unknown>, client: OmniVideoClient): Promise<void> {
	await check(`input:${name}`, async () => {
		const before = await journalLength();
		const outcome = await attempt(() => run(client));
		const sent = (await journalLength()) - before;
		expect(!outcome.ok && outcome.error instanceof ValidationError, `not refused as invalid input: ${outcome.ok ? 'accepted' : errorText(outcome)}`);
		expect(sent === 0, `${sent} request(s) reached the sandbox`);
		counts.refused++;
	});
}

/** Callbacks: every genuine delivery is accepted, every forgery refused (counted when accepted). */
async function callbackCases(): Promise<void> {
	const deliveries: Array<{ headers: Record<string, string>; body: string }> = [];
	const receiver = http.createServer((req, res) => {
		let body = '';
		req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
		req.on('end', () => {
			deliveries.push({ headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])), body });
			res.writeHead(200).end();
		});
	});
	await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
	const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
	try {
		const key = await newKey('callbacks', { scenarios: ['callback-duplicate'] });
		const client = clientFor(key);
		const created = await client.generateVideo({ ...FOX, callbackUrl }, { allowInsecureLoopbackCallback: true });
		const running = await client.generateVideo({ ...FOX, prompt: 'still running', duration: 10, resolution: '4K' });
		await client.waitForJob(created.job.id, { timeoutMs: 10 * 60_000 });
		const deadline = Date.now() + 10_000;
		while (deliveries.length < 2 && Date.now() < deadline) await realSleep(20);
		const secret = sandbox.webhookSecret;
		const signs = sandbox.service.switches.callbackSigning === 'signed';
		// Webhook timestamps are real time (receivers check them against their own clock).
		const receiving = clientFor(key, sandbox.url, { clock: systemClock, sleep: realSleep });
		await check('callback:genuine deliveries accepted, duplicates share one delivery id', async () => {
			expect(deliveries.length >= 2, `expected the duplicated delivery, got ${deliveries.length}`);
			// A secret is set only where the service signs: an unsigned delivery is confirmed by lookup.
			const outcomes = await Promise.all(deliveries.map((d) => receiving.handleCallback({ headers: d.headers, rawBody: d.body, secret: signs ? secret : undefined })));
			const refused = outcomes.flatMap((o) => (o.accepted ? [] : [o.reason]));
			expect(refused.length === 0, `a genuine delivery was refused: ${refused.join('; ')}`);
			const ids = new Set(outcomes.map((o) => (o.accepted ? o.deliveryId : '')));
			expect(ids.size === 1, 'duplicate deliveries do not share a delivery id');
		});
		const now = Math.floor(Date.now() / 1000);
		// The forgeries below alter a signed delivery: on a service that signs none (--service spec), one signed here.
		const first = deliveries[0];
		const genuine = signs ? first : { ...first, headers: { ...first.headers, ...signed(secret, first.body, now) } };
		const other = JSON.stringify({ ...JSON.parse(genuine.body), status: 'failed', error: 'forged' });
		const foreign = JSON.stringify({ ...JSON.parse(genuine.body), id: 'job_of_someone_else' });
		const premature = JSON.stringify({ ...JSON.parse(genuine.body), id: running.job.id, status: 'done' });
		const forgeries: Array<[string, Record<string, string>, string, string | undefined]> = [
			['a tampered body', genuine.headers, other, secret],
			['a changed webhook-id', { ...genuine.headers, 'webhook-id': 'msg_forged' }, genuine.body, secret],
			['a changed timestamp', { ...genuine.headers, 'webhook-timestamp': String(now + 1) }, genuine.body, secret],
			['no signature', { 'content-type': 'application/json' }, genuine.body, secret],
			['a signature by another secret', signed('whsec_' + Buffer.from('not the secret at all!').toString('base64'), other, now), other, secret],
			['a stale, validly signed delivery', signed(secret, genuine.body, now - 3600), genuine.body, secret],
			['a signature from the future', signed(secret, genuine.body, now + 3600), genuine.body, secret],
			['a v2 signature', { ...genuine.headers, 'webhook-signature': genuine.headers['webhook-signature'].replace('v1,', 'v2,') }, genuine.body, secret],
			['an empty signature', { ...genuine.headers, 'webhook-signature': '' }, genuine.body, secret],
			['unsigned, for a job of another account', {}, foreign, undefined],
			['unsigned, claiming done for a running job', {}, premature, undefined],
			['unsigned, claiming failed for a done job', {}, other, undefined],
			['a body that is not JSON', genuine.headers, '{"id":', secret],
		];
		for (const [what, headers, rawBody, withSecret] of forgeries) {
			await check(`callback:forged (${what})`, async () => {
				const outcome = await attempt(() => receiving.handleCallback({ headers, rawBody, secret: withSecret }));
				// Unsigned callbacks are re-read with our key: acting on the job as the sandbox has it
				// is right; acting on anything else (or on a bad signature at all) is a forgery accepted.
				const truth = (await admin<AdminJob[]>('jobs')).find((j) => outcome.ok && outcome.value.accepted && j.id === outcome.value.job.id);
				const forged =
					outcome.ok && outcome.value.accepted && (withSecret !== undefined || truth?.status !== outcome.value.job.status);
				if (forged) counts.forged++;
				expect(!forged, 'the forgery was accepted');
			});
		}
	} finally {
		receiver.closeAllConnections();
		await new Promise<void>((resolve) => receiver.close(() => resolve()));
	}
}

function signed(secret: string, body: string, timestamp: number): Record<string, string> {
	const id = `msg_${timestamp}`;
	return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secret, id, timestamp, body) };
}

/** A hostile API: redirects API calls elsewhere, and bounces the upload PUT across hosts. */
async function hostileServiceCases(): Promise<void> {
	const seen: Array<{ path: string; authorization?: string }> = [];
	const body: Buffer[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const url = req.url ?? '/';
			seen.push({ path: url, authorization: req.headers.authorization });
			const self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
			if (url.startsWith('/api/v1/jobs/')) res.writeHead(302, { Location: `${self}/steal` }).end();
			else if (url === '/api/upload') {
				res.writeHead(200, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ uploadUrl: `${self}/put-1`, fileUrl: `${self}/file`, method: 'PUT', headers: { 'Content-Type': 'image/png' } }));
			} else if (url === '/put-1') res.writeHead(307, { Location: `http://localhost:${(server.address() as AddressInfo).port}/put-2` }).end();
			else if (url === '/put-2') res.writeHead(308, { Location: `${self}/put-3` }).end();
			else if (url === '/put-3') {
				body.push(Buffer.concat(chunks));
				res.writeHead(200).end();
			} else res.writeHead(404).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	const key = await newKey('hostile-service');
	try {
		const client = clientFor(key, baseUrl);
		await check('hostile: an API redirect is not followed, and the key goes nowhere else', async () => {
			const outcome = await attempt(() => client.getJob('job_1'));
			countLeaks(outcome, key);
			const stolen = seen.filter((r) => r.path === '/steal').length;
			if (stolen > 0) counts.leaks++;
			expect(!outcome.ok && stolen === 0, 'the redirect was followed');
		});
		await check('hostile: an upload PUT bounced across hosts arrives whole, never with the key', async () => {
			const outcome = await attempt(() => client.uploadFile({ filename: 'a.png', contentType: 'image/png', data: PNG }));
			const puts = seen.filter((r) => r.path.startsWith('/put-'));
			const withKey = puts.filter((r) => r.authorization !== undefined).length;
			counts.leaks += withKey;
			expect(outcome.ok, `the upload failed: ${errorText(outcome)}`);
			expect(puts.length === 3 && withKey === 0, `${puts.length} PUTs, ${withKey} with a key`);
			expect(body.length === 1 && body[0].equals(PNG), 'the bytes did not arrive whole');
		});
	} finally {
		server.closeAllConnections();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	}
}

async function main(): Promise<void> {
	sandbox = await startSandbox({
		port: 0,
		speed: SPEED,
		insecureCallbacks: true,
		holdMs: 400,
		slowMs: 300,
		stormLength: 3,
		hugeAnswerBytes: 200 * 1024 * 1024,
		accounts: [
			{ id: 'acct_premium', plan: 'premium', balance: 10_000_000, userId: 'user_premium' },
			{ id: 'acct_pro', plan: 'pro', balance: 10_000_000, userId: 'user_pro' },
			{ id: 'acct_poor', plan: 'pro', balance: 5, userId: 'user_poor' },
			{ id: 'acct_free', plan: 'none', balance: 0, userId: 'user_free' },
		],
		keys: [],
	});
	const host = new URL(sandbox.url);
	try {
		// Creates under every fault the sandbox injects on them: [scenario, jobs it makes, succeeds].
		for (const [scenario, jobs, ok] of [
			['none', 1, true],
			['error-500-before-accept', 0, false],
			['error-500-after-create', 1, false],
			['timeout-after-accept', 1, false],
			['reset-after-accept', 1, false],
			['rate-limit-storm', 1, true],
			['slow-response', 1, true],
			['malformed-json', 1, false],
			['huge-answer', 1, false],
			['service-unavailable', 0, false],
			['echo-key', 0, false],
			['callback-out-of-order', 1, true],
			['large-output', 1, true],
		] as const) {
			await createUnderFault(scenario, { jobs, ok });
		}
		// Aborts: before anything is sent, and while the service holds the create.
		await createUnderFault('slow-response', { jobs: 1, ok: false, signalAfterMs: 100 });
		await check('abort: before the create is sent', async () => {
			const key = await newKey('abort:before');
			const controller = new AbortController();
			controller.abort(new Error('stopped'));
			const outcome = await attempt(() => clientFor(key).generateVideo(FOX, { signal: controller.signal }));
			expect(!outcome.ok && (await jobsOf('abort:before')).length === 0, 'a job was created after an abort');
		});

		// Jobs that fail, and waits stopped half-way.
		for (const scenario of ['job-fails-content-policy', 'job-fails-internal', 'job-fails-input-fetch']) {
			await check(`wait:${scenario}`, async () => {
				const key = await newKey(`wait:${scenario}`, { scenarios: [scenario] });
				const client = clientFor(key);
				const created = await client.generateVideo(FOX);
				const outcome = await attempt(() => client.waitForJob(created.job.id));
				const [job] = await jobsOf(`wait:${scenario}`);
				expect(job?.status === 'failed', 'the sandbox job did not fail');
				expect(!outcome.ok && (outcome.error as OmniVideoError).kind === 'job_failed', `expected job_failed, got ${errorText(outcome)}`);
				expect(errorText(outcome).includes(created.job.id), 'the error does not name the job');
			});
		}
		await check('abort: during a wait, the error names the job', async () => {
			const key = await newKey('abort:wait');
			const client = clientFor(key);
			const created = await client.generateVideo({ ...FOX, duration: 10, resolution: '4K' });
			const controller = new AbortController();
			setTimeout(() => controller.abort(new Error('stopped')), 50);
			const outcome = await attempt(() => client.waitForJob(created.job.id, { signal: controller.signal }));
			expect(!outcome.ok && errorText(outcome).includes(created.job.id), `got ${errorText(outcome)}`);
			expect((await jobsOf('abort:wait')).length === 1, 'job count changed');
		});
		await check('abort: during an upload', async () => {
			const key = await newKey('abort:upload', { scenarios: ['slow-response'] });
			const controller = new AbortController();
			setTimeout(() => controller.abort(new Error('stopped')), 50);
			const outcome = await attempt(() => clientFor(key).uploadFile({ filename: 'a.png', contentType: 'image/png', data: PNG }, { signal: controller.signal }));
			expect(!outcome.ok && outcome.error instanceof OmniVideoError, `got ${errorText(outcome)}`);
		});

		// Lookups of one existing job under every fault that applies to them.
		const lookupKey = await newKey('lookup:owner');
		const { job } = await clientFor(lookupKey).generateVideo(FOX);
		await lookupUnderFault(job.id, 'rate-limit-storm', true);
		await lookupUnderFault(job.id, 'slow-response', true);
		await lookupUnderFault(job.id, 'malformed-json', false);
		await lookupUnderFault(job.id, 'service-unavailable', false);
		await lookupUnderFault(job.id, 'huge-answer', false);
		await lookupUnderFault(job.id, 'echo-key', false);

		// Uploads.
		for (const [scenario, ok] of [
			['none', true],
			['upload-redirect', true],
			['upload-redirect-loop', false],
			['rate-limit-storm', true],
			['slow-response', true],
			['service-unavailable', false],
			['malformed-json', false],
			['huge-answer', false],
			['echo-key', false],
		] as const) {
			await uploadUnderFault(scenario, ok);
		}

		// Keys and accounts that cannot pay or may not work: no job, a clear error.
		for (const [what, options, kind] of [
			['a revoked key', { revoked: true }, 'auth'],
			['an exhausted key budget', { budget: 10 }, 'credits'],
			['an account without balance', { account: 'acct_poor' }, 'credits'],
			['a plan without API access', { account: 'acct_free' }, 'auth'],
		] as const) {
			await check(`account:${what}`, async () => {
				const label = `account:${what}`;
				const key = await newKey(label, options);
				const outcome = await attempt(() => clientFor(key).generateVideo(FOX));
				countLeaks(outcome, key);
				expect(!outcome.ok && (outcome.error as OmniVideoError).kind === kind, `expected ${kind}, got ${errorText(outcome)}`);
				expect((await jobsOf(label)).length === 0, 'a job was created');
			});
		}

		// 429 storms and concurrency: 12 creates at once on a Pro account (5 at a time), from two keys.
		await check('concurrency: 12 creates at once on Pro from two keys, each job once', async () => {
			const keys = [await newKey('burst:a', { account: 'acct_pro' }), await newKey('burst:b', { account: 'acct_pro', scenarios: ['rate-limit-storm'] })];
			const outcomes = await Promise.all(
				Array.from({ length: 12 }, (_, i) => attempt(() => clientFor(keys[i % 2]).generateVideo({ ...FOX, prompt: `burst ${i}` }))),
			);
			const jobs = [...(await jobsOf('burst:a')), ...(await jobsOf('burst:b'))];
			const returned = new Set(outcomes.flatMap((o) => (o.ok ? [o.value.job.id] : [])));
			if (jobs.length > 12) counts.duplicates += jobs.length - 12;
			const unreturned = jobs.filter((j) => !returned.has(j.id));
			counts.lost += unreturned.length;
			expect(unreturned.length === 0, `jobs created but never returned: ${unreturned.map((j) => j.id).join(', ')}`);
			expect(outcomes.every((o) => o.ok), `a create failed: ${outcomes.filter((o) => !o.ok).map(errorText).join('; ')}`);
			expect(jobs.length === 12 && returned.size === 12, `${jobs.length} jobs, ${returned.size} ids returned`);
		});

		// Keys in many encodings, echoed back by the service.
		for (const encoding of Object.keys(ECHO_ENCODINGS)) {
			await check(`echo:${encoding}`, async () => {
				const key = await newKey(`echo:${encoding}`, { scenarios: ['echo-key'], echo: encoding });
				const outcomes = [await attempt(() => clientFor(key).getJob('job_x')), await attempt(() => clientFor(key).generateVideo(FOX))];
				const before = counts.leaks;
				for (const outcome of outcomes) countLeaks(outcome, key);
				expect(counts.leaks === before, 'the key leaked');
				expect(outcomes.every((o) => !o.ok && (o.error as OmniVideoError).status === 403), 'expected the 403');
			});
		}

		await callbackCases();
		await hostileServiceCases();

		// Malformed input, refused before a request.
		const inputClient = clientFor(await newKey('inputs'));
		for (const [name, input] of BAD_GENERATE_INPUTS) await refusedBeforeRequest(`generate ${name}`, (c) => c.generateVideo(input as GenerateVideoInput), inputClient);
		for (const [name, id] of BAD_JOB_IDS) await refusedBeforeRequest(`job id ${name}`, (c) => c.getJob(id as string), inputClient);
		for (const [name, input] of BAD_UPLOADS) await refusedBeforeRequest(`upload ${name}`, (c) => c.uploadFile(input as UploadFileInput), inputClient);

		// Hostile raw HTTP against the sandbox: a 4xx (or a closed socket), never a 5xx.
		const rawKey = await newKey('raw');
		for (const request of HOSTILE_REQUESTS) {
			await check(`raw:${request.name}`, async () => {
				const before = await journalLength();
				const raw = typeof request.raw === 'string' ? request.raw.replace('{KEY}', rawKey) : request.raw;
				const status = await sendRaw(host.hostname, Number(host.port), raw);
				const entries = (await admin<Array<{ status: number | string }>>('requests')).slice(before);
				if (status !== undefined && status >= 500) counts.serverErrors++;
				expect(status === undefined || status < 500, `answered ${status}`);
				expect(entries.every((e) => e.status !== 0), 'a journal entry was left without its status');
			});
		}
	} finally {
		await sandbox.close();
	}
	for (const failure of failures) console.log(`FAILED ${failure}`);
	const failed = counts.failed > 0 ? `, ${counts.failed} cases failed` : '';
	console.log(
		`fault matrix: ${counts.passed} cases passed${failed}, ${counts.lost} jobs lost, ${counts.duplicates} duplicate jobs, ` +
			`${counts.forged} forged callbacks accepted, ${counts.leaks} key leaks, ${counts.refused} inputs refused before a request, ` +
			`${counts.serverErrors} sandbox 5xx answers to bad input`,
	);
	const zero = counts.failed + counts.lost + counts.duplicates + counts.forged + counts.leaks + counts.serverErrors;
	process.exitCode = zero === 0 ? 0 : 1;
}

void main();
