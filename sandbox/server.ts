/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- dev tooling, never shipped in the n8n package */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createHash } from 'node:crypto';
import { Accounts, type ApiKey } from './accounts';
import { Callbacks, type CallbackAttempt } from './callbacks';
import { serveVideo, SAMPLE_MP4 } from './cdn';
import { VirtualClock } from './clock';
import { resolveConfig, type SandboxConfig } from './config';
import {
	bearerKey,
	decodeSegment,
	errorReply,
	isNonJsonBody,
	jsonReply,
	newId,
	readBody,
	send,
	sendHuge,
	type ErrorCode,
	type Reply,
} from './httpUtil';
import { IdempotencyStore } from './idempotency';
import { Jobs, type FailureCode, type GenerateBody } from './jobs';
import { RenderTimes } from './renderTimes';
import { RateWindows } from './rateLimits';
import { SCENARIOS, selectScenarios, type ScenarioName } from './scenarios';
import { Uploads } from './uploads';
import { ECHO_ENCODINGS, isEchoEncoding } from './echo';
import { isReply, validateGenerateBody, validateUploadBody } from './validation';

export interface JournalEntry {
	at: string;
	requestId: string;
	method: string;
	path: string;
	/** The key's label, never the key. */
	key?: string;
	status: number | 'reset' | 'timeout';
	scenarios: ScenarioName[];
	idempotencyKey?: string;
}

export interface Sandbox {
	url: string;
	config: SandboxConfig;
	keys: { pro: string; premium: string; budget: string; revoked: string; noApiAccess: string };
	webhookSecret: string;
	clock: VirtualClock;
	accounts: Accounts;
	jobs: Jobs;
	journal: JournalEntry[];
	callbackAttempts: CallbackAttempt[];
	/** Back to the state at start: no jobs, fresh balances, empty journal. */
	reset(): void;
	close(): Promise<void>;
}

export type SandboxOptions = Partial<SandboxConfig> & { configFile?: string };

const MAX_JSON_BYTES = 1024 * 1024;

/** An admin request's JSON object (empty when there is no body), or undefined when it is not one. */
function adminBody(raw: Buffer): Record<string, unknown> | undefined {
	if (raw.length === 0) return {};
	try {
		const value: unknown = JSON.parse(raw.toString('utf8'));
		return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
	} catch {
		return undefined;
	}
}

/** Bounds that keep the virtual clock a valid date. */
const MAX_SPEED = 1_000_000;
const MAX_ADVANCE_MS = 10 * 365 * 24 * 3_600_000;

function isWithin(value: unknown, max: number): boolean {
	return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= max;
}

/** Starts the sandbox on 127.0.0.1 (port 0 picks a free port) and resolves once it listens. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
	const config = resolveConfig(options);
	const clock = new VirtualClock(config.speed);
	const accounts = new Accounts(config);
	let baseUrl = '';
	const journal: JournalEntry[] = [];
	const windows = new RateWindows();
	const idempotency = new IdempotencyStore();
	const uploads = new Uploads();
	const storms = new Map<string, number>();
	const clientsOnSandboxClock = config.clientClock === 'sandbox';
	const callbacks = new Callbacks(clock, () => config.webhookSecret, clientsOnSandboxClock);
	const jobs = new Jobs(clock, accounts, () => config.cdnUrl ?? baseUrl, (job) => callbacks.deliver(job, jobs.record(job)), new RenderTimes(config.renderTimes));
	const sockets = new Set<Socket>();
	const pending = new Set<ReturnType<typeof setTimeout>>();

	/** Retry-After: the seconds a client must wait on its own clock. */
	const retryAfterSeconds = (virtualMs: number) => Math.max(1, Math.ceil((clientsOnSandboxClock ? virtualMs : clock.realMs(virtualMs)) / 1000));
	const later = (ms: number) =>
		new Promise<void>((resolve) => {
			const timer = setTimeout(() => {
				pending.delete(timer);
				resolve();
			}, ms);
			pending.add(timer);
		});

	function rateHeaders(key: ApiKey): Record<string, string> {
		const limits = key.account.limits;
		if (!limits) return {};
		const state = windows.peek(key.key, limits, clock.now());
		return {
			'X-RateLimit-Limit': String(state.limit),
			'X-RateLimit-Remaining': String(state.remaining),
			'X-RateLimit-Reset': String(Math.ceil(state.resetAt / 1000)),
		};
	}

	function fingerprint(body: unknown): string {
		return createHash('sha256').update(JSON.stringify(body ?? null)).digest('hex');
	}

	function sourceFailure(body: GenerateBody): FailureCode | undefined {
		for (const source of [body.imageUrl, body.videoUrl]) {
			if (!source || !source.startsWith(baseUrl)) continue;
			if (!uploads.fileAt(new URL(source).pathname)) return 'input_fetch_failed';
		}
		return undefined;
	}

	async function generate(key: ApiKey, body: unknown, scenarios: Set<ScenarioName>, idempotencyKey?: string): Promise<Reply> {
		const checked = validateGenerateBody(body, config.insecureCallbacks);
		if (isReply(checked)) return checked;
		const limits = key.account.limits;
		if (!limits) return errorReply(403, 'forbidden', 'This plan has no API access.');
		const scope = key.account.id;
		if (idempotencyKey) {
			const seen = idempotency.begin(scope, idempotencyKey, fingerprint(body), clock.now());
			if (seen.kind === 'replay') return seen.reply;
			if (seen.kind === 'conflict') return errorReply(409, 'idempotency_conflict', 'A request with this Idempotency-Key is still in flight.');
			if (seen.kind === 'reused') return errorReply(422, 'idempotency_key_reused', 'This Idempotency-Key was used for a different request.');
		}
		// A slow service is slow while it works: the key stays in flight meanwhile.
		if (scenarios.has('slow-response')) await later(config.slowMs);
		const reply = createJob(key, checked, scenarios, limits.concurrentJobs);
		if (idempotencyKey) idempotency.finish(scope, idempotencyKey, reply.status === 202 ? reply : undefined);
		if (reply.status === 202 && scenarios.has('error-500-after-create')) {
			return errorReply(500, 'internal', 'Internal error after the job was created.');
		}
		return reply;
	}

	function createJob(key: ApiKey, body: GenerateBody, scenarios: Set<ScenarioName>, concurrentJobs: number): Reply {
		if (scenarios.has('error-500-before-accept')) return errorReply(500, 'internal', 'Internal error; no job was created.');
		if (jobs.activeCount(key.account.id) >= concurrentJobs) {
			const now = clock.now();
			let firstEnd = Infinity;
			for (const job of jobs.all.values()) {
				if (!job.finished && job.key.account.id === key.account.id) firstEnd = Math.min(firstEnd, job.endsAt);
			}
			return errorReply(429, 'concurrency_limited', `The plan allows ${concurrentJobs} jobs at once.`, {
				'Retry-After': String(retryAfterSeconds(firstEnd - now)),
			});
		}
		const price = body.duration * config.prices[body.resolution];
		const refusal = accounts.refusal(key, price);
		if (refusal === 'key_budget_exceeded') {
			return errorReply(402, refusal, `This key's credit budget cannot cover ${price} credits.`);
		}
		if (refusal) return errorReply(402, refusal, `The account has too few credits for ${price} credits.`);
		const failure: FailureCode | undefined = scenarios.has('job-fails-content-policy')
			? 'content_policy'
			: scenarios.has('job-fails-internal')
				? 'internal'
				: scenarios.has('job-fails-input-fetch')
					? 'input_fetch_failed'
					: scenarios.has('job-fails-timeout')
						? 'timeout'
						: sourceFailure(body);
		const job = jobs.create(key, body, price, {
			failure,
			largeOutput: scenarios.has('large-output'),
			callbackDelayMs: scenarios.has('callback-out-of-order') ? 120_000 : 0,
			duplicateCallbacks: scenarios.has('callback-duplicate'),
		});
		return jsonReply(202, { id: job.id, status: 'queued', creditsQueued: price }, { Location: `/api/v1/jobs/${encodeURIComponent(job.id)}` });
	}

	function upload(key: ApiKey, body: unknown, scenarios: Set<ScenarioName>, idempotencyKey?: string): Reply {
		const checked = validateUploadBody(body, config.maxUploadBytes);
		if (isReply(checked)) return checked;
		const scope = `${key.account.id}:upload`;
		if (idempotencyKey) {
			const seen = idempotency.begin(scope, idempotencyKey, fingerprint(body), clock.now());
			if (seen.kind === 'replay') return seen.reply;
			if (seen.kind === 'conflict') return errorReply(409, 'idempotency_conflict', 'A request with this Idempotency-Key is still in flight.');
			if (seen.kind === 'reused') return errorReply(422, 'idempotency_key_reused', 'This Idempotency-Key was used for a different request.');
		}
		const redirect = scenarios.has('upload-redirect-loop') ? 'loop' : scenarios.has('upload-redirect') ? 'chain' : undefined;
		const ticket = uploads.create(checked.filename, checked.contentType, checked.size, clock.now(), redirect);
		const reply = jsonReply(200, {
			uploadUrl: baseUrl + uploads.uploadPath(ticket),
			fileUrl: baseUrl + uploads.filePath(ticket),
			method: 'PUT',
			headers: { 'Content-Type': ticket.contentType },
			expiresAt: new Date(ticket.expiresAt).toISOString(),
		});
		if (idempotencyKey) idempotency.finish(scope, idempotencyKey, reply);
		return reply;
	}

	async function handleApi(req: IncomingMessage, res: ServerResponse, url: URL, requestId: string): Promise<void> {
		const entry: JournalEntry = {
			at: new Date(clock.now()).toISOString(),
			requestId,
			method: req.method ?? 'GET',
			path: url.pathname,
			status: 0,
			scenarios: [],
		};
		journal.push(entry);
		const finish = (reply: Reply, raw?: string) => {
			entry.status = reply.status;
			send(res, reply, requestId, raw);
		};
		let raw: Buffer | 'too_large';
		try {
			raw = req.method === 'POST' ? await readBody(req, MAX_JSON_BYTES) : Buffer.alloc(0);
		} catch {
			// The client went away in the middle of its body.
			entry.status = 'reset';
			return void req.socket.destroy();
		}
		const key = accounts.find(bearerKey(req));
		if (!key || key.revoked) {
			return finish(errorReply(401, 'unauthorized', 'Missing, unknown or revoked API key.'));
		}
		entry.key = key.label;
		if (!key.account.limits) return finish(errorReply(403, 'forbidden', "This account's plan has no API access."));
		if (raw === 'too_large') return finish(errorReply(413, 'file_too_large', 'The JSON body is too large.'));
		if (raw.length > 0 && isNonJsonBody(req)) {
			return finish(errorReply(415, 'unsupported_media_type', 'Send the body as JSON, with Content-Type: application/json.'));
		}
		let body: unknown;
		let bodyIsJson = true;
		if (raw.length > 0) {
			try {
				body = JSON.parse(raw.toString('utf8'));
			} catch {
				bodyIsJson = false;
			}
		}
		const scenarios = selectScenarios({
			key: key.scenarios,
			header: req.headers['x-sandbox-scenario'] as string | undefined,
			prompt: (body as { prompt?: unknown } | undefined)?.prompt,
		});
		entry.scenarios = [...scenarios];
		const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
		entry.idempotencyKey = idempotencyKey;
		if (scenarios.has('echo-key')) {
			const name = (req.headers['x-sandbox-echo'] as string | undefined) ?? key.echo;
			const echoed = ECHO_ENCODINGS[isEchoEncoding(name) ? name : 'url'](key.key);
			return finish(errorReply(403, 'forbidden', `The key ${echoed} may not do this.`, { 'X-Echoed-Key': echoed }));
		}
		if (scenarios.has('service-unavailable')) {
			return finish(errorReply(503, 'unavailable', 'The service is unavailable.', { 'Retry-After': '1' }));
		}
		if (scenarios.has('rate-limit-storm') && !storms.has(key.key)) storms.set(key.key, config.stormLength);
		const storm = storms.get(key.key) ?? 0;
		if (storm > 0) {
			storms.set(key.key, storm - 1);
			return finish(errorReply(429, 'rate_limited', 'Too many requests (storm).', { 'Retry-After': '1', ...rateHeaders(key) }));
		}
		const taken = windows.take(key.key, key.account.limits, clock.now());
		if (!taken.allowed) {
			return finish(
				errorReply(429, 'rate_limited', `Rate limit of ${taken.window.limit} requests reached.`, {
					'Retry-After': String(retryAfterSeconds(taken.retryAtMs - clock.now())),
					...rateHeaders(key),
				}),
			);
		}

		let reply: Reply;
		const method = req.method ?? 'GET';
		const jobMatch = url.pathname.match(/^\/api\/v1\/jobs\/([^/]+)$/);
		if (!bodyIsJson) reply = errorReply(400, 'invalid_request', 'The body is not valid JSON.');
		else if (method === 'POST' && url.pathname === '/api/v1/generate') reply = await generate(key, body, scenarios, idempotencyKey);
		else if (method === 'POST' && url.pathname === '/api/upload') reply = upload(key, body, scenarios, idempotencyKey);
		else if (method === 'GET' && jobMatch) {
			const id = decodeSegment(jobMatch[1]);
			const job = id === undefined ? undefined : jobs.find(id, key.account.id);
			if (id === undefined) reply = errorReply(400, 'invalid_request', 'The job id in the path is not valid percent-encoding.');
			else reply = job ? jsonReply(200, jobs.record(job)) : errorReply(404, 'not_found', `No job ${id} for this account.`);
		} else reply = errorReply(404, 'not_found', `No endpoint ${method} ${url.pathname}.`);
		reply = { ...reply, headers: { ...rateHeaders(key), ...reply.headers } };

		const accepted = reply.status === 202 || (reply.status === 500 && scenarios.has('error-500-after-create'));
		const isGenerate = method === 'POST' && url.pathname === '/api/v1/generate';
		if (scenarios.has('slow-response') && !isGenerate) await later(config.slowMs);
		if (accepted && scenarios.has('reset-after-accept')) {
			entry.status = 'reset';
			req.socket.destroy();
			return;
		}
		if (accepted && scenarios.has('timeout-after-accept')) {
			entry.status = 'timeout';
			await later(config.holdMs);
			req.socket.destroy();
			return;
		}
		if (scenarios.has('malformed-json')) return finish(reply, '{"id": "job_');
		if (scenarios.has('huge-answer')) {
			entry.status = reply.status;
			return sendHuge(res, reply, requestId, config.hugeAnswerBytes);
		}
		finish(reply);
	}

	async function handleAdmin(req: IncomingMessage, res: ServerResponse, url: URL, requestId: string): Promise<void> {
		const route = `${req.method} ${url.pathname.replace(/\/$/, '')}`;
		const raw = req.method === 'POST' ? await readBody(req, MAX_JSON_BYTES) : Buffer.alloc(0);
		const refuse = (status: number, code: ErrorCode, message: string) => send(res, errorReply(status, code, message), requestId);
		if (raw === 'too_large') return refuse(413, 'file_too_large', 'The JSON body is too large.');
		const body = adminBody(raw);
		if (!body) return refuse(400, 'invalid_request', 'The body must be a JSON object.');
		const reply = (value: unknown, status = 200) => send(res, jsonReply(status, value), requestId);
		switch (route) {
			case 'GET /__sandbox/requests':
				return reply(journal);
			case 'GET /__sandbox/jobs':
				return reply([...jobs.all.values()].map((job) => ({ ...jobs.record(job), key: job.key.label, account: job.key.account.id, request: job.body })));
			case 'GET /__sandbox/callbacks':
				return reply(callbacks.attempts);
			case 'GET /__sandbox/scenarios':
				return reply(SCENARIOS);
			case 'GET /__sandbox/accounts':
				return reply(
					[...accounts.accounts.values()].map((a) => ({ id: a.id, balance: a.balance, reserved: a.reserved, limits: a.limits ?? null })),
				);
			case 'POST /__sandbox/reset':
				sandbox.reset();
				return reply({ reset: true });
			case 'GET /__sandbox/clock':
				return reply({ now: new Date(clock.now()).toISOString(), speed: clock.speed });
			case 'POST /__sandbox/clock':
				if (body.speed !== undefined && !isWithin(body.speed, MAX_SPEED)) return refuse(400, 'invalid_request', `speed must be a number above 0, at most ${MAX_SPEED}.`);
				if (body.advanceMs !== undefined && !isWithin(body.advanceMs, MAX_ADVANCE_MS)) {
					return refuse(400, 'invalid_request', `advanceMs must be a number of milliseconds above 0, at most ${MAX_ADVANCE_MS}.`);
				}
				if (body.speed !== undefined) clock.setSpeed(body.speed as number);
				if (body.advanceMs !== undefined) clock.advance(body.advanceMs as number);
				return reply({ now: new Date(clock.now()).toISOString(), speed: clock.speed });
			case 'POST /__sandbox/keys': {
				if (typeof body.key !== 'string' || body.key.length < 4) return refuse(400, 'invalid_request', 'key must be a string of at least 4 characters.');
				const account = String(body.account ?? 'acct_pro');
				if (!accounts.accounts.has(account)) return refuse(404, 'not_found', `No account ${account}.`);
				const added = accounts.addKey({
					key: body.key,
					account,
					budget: typeof body.budget === 'number' ? body.budget : undefined,
					revoked: body.revoked === true,
					scenarios: Array.isArray(body.scenarios) ? body.scenarios.map(String) : undefined,
					label: typeof body.label === 'string' ? body.label : undefined,
					echo: typeof body.echo === 'string' ? body.echo : undefined,
				});
				return reply({ label: added.label, account: added.account.id }, 201);
			}
			default:
				return send(res, errorReply(404, 'not_found', `No admin endpoint ${route}.`), requestId);
		}
	}

	async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
		const requestId = newId('req');
		let url: URL;
		try {
			url = new URL(req.url ?? '/', baseUrl);
		} catch {
			return send(res, errorReply(400, 'invalid_request', 'The request target is not a valid path.'), requestId);
		}
		if (url.pathname.startsWith('/__sandbox/')) return handleAdmin(req, res, url, requestId);
		if (url.pathname.startsWith('/api/')) return handleApi(req, res, url, requestId);
		if (req.method === 'PUT' && url.pathname.startsWith('/__uploads/')) {
			const token = url.pathname.slice('/__uploads/'.length);
			const refusal = uploads.checkPut(token, url.searchParams, req.headers['content-type'], clock.now());
			if (refusal) return send(res, errorReply(403, 'forbidden', `Upload refused: ${refusal}.`), requestId);
			const bytes = await readBody(req, config.maxUploadBytes);
			if (bytes === 'too_large') return send(res, errorReply(413, 'file_too_large', `At most ${config.maxUploadBytes} bytes are accepted.`), requestId);
			const ticket = uploads.tickets.get(token);
			const redirect = ticket && uploads.redirectFor(ticket, url);
			if (redirect) {
				res.writeHead(redirect.status, { 'X-Request-Id': requestId, Location: redirect.location, 'Content-Length': '0' });
				return void res.end();
			}
			if (ticket) ticket.data = bytes;
			res.writeHead(200, { 'X-Request-Id': requestId, 'Content-Length': '0' });
			return void res.end();
		}
		if ((req.method === 'GET' || req.method === 'HEAD') && url.pathname.startsWith('/files/')) {
			const file = uploads.fileAt(url.pathname);
			if (!file?.data) return send(res, errorReply(404, 'not_found', 'No such file.'), requestId);
			res.writeHead(200, { 'Content-Type': file.contentType, 'Content-Length': String(file.data.length), 'X-Request-Id': requestId });
			return void res.end(req.method === 'HEAD' ? undefined : file.data);
		}
		const cdn = url.pathname.match(/^\/omni\/([^/]+)\/([^/]+)\/output\.mp4$/);
		if ((req.method === 'GET' || req.method === 'HEAD') && cdn) {
			const id = decodeSegment(cdn[2]);
			const job = id === undefined ? undefined : jobs.all.get(id);
			if (!job || !job.finished || job.failure || job.key.account.userId !== cdn[1]) {
				return send(res, errorReply(404, 'not_found', 'No such video.'), requestId);
			}
			return serveVideo(req, res, job.largeOutput ? config.largeFileBytes : SAMPLE_MP4.length, requestId);
		}
		send(res, errorReply(404, 'not_found', `Nothing at ${url.pathname}.`), requestId);
	}

	const server = http.createServer((req, res) => {
		handle(req, res).catch((error: unknown) => {
			if (!res.headersSent) send(res, errorReply(500, 'internal', `Sandbox error: ${(error as Error).message}`), newId('req'));
			else res.destroy();
		});
	});
	server.on('connection', (socket) => {
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(config.port, config.host, () => resolve());
	});
	const address = server.address() as AddressInfo;
	baseUrl = `http://${config.host}:${address.port}`;

	const sandbox: Sandbox = {
		url: baseUrl,
		config,
		keys: {
			pro: 'omni_test_pro',
			premium: 'omni_test_premium',
			budget: 'omni_test_budget',
			revoked: 'omni_test_revoked',
			noApiAccess: 'omni_test_free',
		},
		webhookSecret: config.webhookSecret,
		clock,
		accounts,
		jobs,
		journal,
		callbackAttempts: callbacks.attempts,
		reset() {
			jobs.reset();
			callbacks.reset();
			uploads.reset();
			idempotency.reset();
			windows.reset();
			storms.clear();
			journal.length = 0;
			const fresh = new Accounts(config);
			accounts.accounts.clear();
			accounts.keys.clear();
			for (const [id, account] of fresh.accounts) accounts.accounts.set(id, account);
			for (const [id, key] of fresh.keys) accounts.keys.set(id, key);
		},
		async close() {
			clock.close();
			jobs.close();
			callbacks.close();
			for (const timer of pending) clearTimeout(timer);
			for (const socket of sockets) socket.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
	return sandbox;
}
