/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- the Activepieces piece's test harness: n8n's rules for community nodes do not apply to it */
/**
 * The Activepieces server as the engine and the service meet it, on loopback: what an engine
 * process asks of it over HTTP, and the public resume URLs Omni Video calls. Each engine process
 * (./engineProcess.ts) reaches it only over HTTP, as a real engine reaches its server: nothing is
 * shared in memory. Read in activepieces/activepieces:
 * - packages/server/engine/src/lib/services/storage.service.ts (151d8486): the store is
 *   `GET|DELETE <api>v1/store-entries?key=` and `POST <api>v1/store-entries {key, value}`; a
 *   missing key answers 404 (null). A plain get then put: no compare-and-set.
 * - packages/server/engine/src/lib/services/waitpoint-client.ts (79303a80): `POST <api>v1/waitpoints`.
 * - packages/server/api/src/app/flows/flow-run/waitpoint/waitpoint-service.ts (014e63de):
 *   createForPause returns a waitpoint pre-completed for the run (a resume that came while the
 *   run was RUNNING) before anything else; else one waitpoint per run and step (made again, the
 *   same one comes back). handleResumeSignal: on a PAUSED run the waitpoint is taken and deleted
 *   and the run resumes; on a RUNNING or QUEUED run the resume is buffered (the waitpoint
 *   completed, or a pre-completed one made); an unknown waitpoint of a paused run is ignored.
 * - packages/server/engine/src/lib/services/step-files.service.ts (37c44745): a step's file is
 *   posted to the server, refused above the instance's AP_MAX_FILE_SIZE_MB.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResumePayload } from '@activepieces/shared';
import { DEFAULT_MAX_FILE_SIZE_MB } from '../src/run/runLimits';

/** The engine's request for a waitpoint (waitpoint-client.ts). */
interface CreateWaitpoint {
	flowRunId: string;
	stepName: string;
	type: Waitpoint['type'];
	resumeDateTime?: string;
}

export type RunStatus = 'RUNNING' | 'PAUSED' | 'SUCCEEDED' | 'FAILED' | 'TIMEOUT';

export interface Waitpoint {
	id: string;
	runId: string;
	stepName: string;
	resumeUrl: string;
	type: 'WEBHOOK' | 'DELAY';
	/** A DELAY waitpoint: when the server resumes the run by itself (with no payload). */
	resumeDateTime?: string;
	status: 'PENDING' | 'COMPLETED';
	resumePayload?: ResumePayload;
}

/** What resumed a run: the request to its resume URL, or (undefined) a DELAY waitpoint's time. */
export type Resume = ResumePayload | undefined;

/** What the Activepieces server keeps for the engine: store entries, step files, waitpoints, run states. */
export class EngineServer {
	readonly storeEntries = new Map<string, unknown>();
	readonly files: Array<{ url: string; fileName: string; stepName: string; data: Buffer }> = [];
	/** Every waitpoint made (kept after it resumed, for the tests to read). */
	readonly waitpoints: Waitpoint[] = [];
	/** Each run's state as the server knows it: RUNNING while an engine process has it. */
	readonly runStatus = new Map<string, RunStatus>();
	/** Resumes the server handed on (run id → payloads), and those it ignored. */
	readonly ignoredResumes: Array<{ runId: string; waitpointId: string }> = [];
	/** How many store requests the engine processes sent. */
	storeRequests = 0;
	private readonly live = new Map<string, Waitpoint>();
	private readonly resumeWaiters = new Map<string, Array<(payload: Resume) => void>>();
	private readonly pendingResumes = new Map<string, { payload: Resume }>();
	private server?: http.Server;
	private origin?: string;
	private starting?: Promise<void>;

	/**
	 * `publicApiUrl`: the instance's public address with `/api/`, as the engine's constants hold
	 * it; by default this server's own loopback address (so Omni Video's callbacks reach it).
	 * `maxFileSizeMb`: the instance's AP_MAX_FILE_SIZE_MB.
	 */
	constructor(
		private readonly givenPublicApiUrl?: string,
		readonly maxFileSizeMb = DEFAULT_MAX_FILE_SIZE_MB,
		/** Time-scaled runs: a DELAY waitpoint's wait is divided by this (the sandbox's speed). */
		readonly delayScale = 1,
	) {}
	/** Resumes the server made by itself, at a DELAY waitpoint's time. */
	delayResumes = 0;
	/** Resume requests that came while their run was RUNNING (held for its pause). */
	bufferedResumes = 0;
	/** Faults: the next N step files are refused (500), and resume requests are answered but lost. */
	failNextFileWrites = 0;
	loseResumes = false;
	/** Fault: store writes this picks are refused (500), as a server whose database is failing would. */
	refuseStoreWrite?: (key: string, value: unknown) => boolean;
	private gathering?: { keyPart: string; count: number; held: Array<() => void> };

	get publicApiUrl(): string {
		return this.givenPublicApiUrl ?? `${this.requireOrigin()}/api/`;
	}

	get internalApiUrl(): string {
		return `${this.requireOrigin()}/api/`;
	}

	private requireOrigin(): string {
		if (!this.origin) throw new Error('EngineServer: call ready() first');
		return this.origin;
	}

	/** Starts listening on loopback (once); the server does not keep the test process alive. */
	ready(): Promise<void> {
		this.starting ??= new Promise<void>((resolve) => {
			this.server = http.createServer((req, res) => void this.handle(req, res));
			this.server.listen(0, '127.0.0.1', () => {
				this.origin = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
				this.server!.unref();
				resolve();
			});
		});
		return this.starting;
	}

	async close(): Promise<void> {
		if (!this.server) return;
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server!.close(() => resolve()));
	}

	/** The resume a paused run is waiting for: handed on when the run pauses, or when it arrives. */
	nextResume(runId: string, timeoutMs = 15_000): Promise<Resume> {
		const pending = this.pendingResumes.get(runId);
		if (pending) {
			this.pendingResumes.delete(runId);
			return Promise.resolve(pending.payload);
		}
		return new Promise<Resume>((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error(`run ${runId} was not resumed within ${timeoutMs} ms`)), timeoutMs);
			const waiters = this.resumeWaiters.get(runId) ?? [];
			waiters.push((payload) => {
				clearTimeout(timer);
				resolve(payload);
			});
			this.resumeWaiters.set(runId, waiters);
		});
	}

	/** The engine's run ended in this state: a paused run resumes at once on a buffered resume. */
	setRunStatus(runId: string, status: RunStatus): void {
		this.runStatus.set(runId, status);
		if (status !== 'PAUSED') return;
		const live = [...this.live.values()].filter((waitpoint) => waitpoint.runId === runId);
		const preCompleted = live.find((waitpoint) => waitpoint.status === 'COMPLETED');
		if (preCompleted) return this.resumeRun(preCompleted, preCompleted.resumePayload);
		// A DELAY waitpoint: the server's scheduled job resumes the run at its time if it is still paused on it.
		for (const waitpoint of live.filter((candidate) => candidate.type === 'DELAY' && candidate.resumeDateTime)) {
			const inMs = Math.max(0, (Date.parse(waitpoint.resumeDateTime!) - Date.now()) / this.delayScale);
			setTimeout(() => {
				if (this.runStatus.get(runId) !== 'PAUSED' || !this.live.has(waitpoint.id)) return;
				this.delayResumes++;
				this.resumeRun(waitpoint, undefined);
			}, inMs).unref();
		}
	}

	private resumeRun(waitpoint: Waitpoint, payload: Resume): void {
		this.live.delete(waitpoint.id);
		this.runStatus.set(waitpoint.runId, 'RUNNING');
		const waiter = this.resumeWaiters.get(waitpoint.runId)?.shift();
		if (waiter) waiter(payload);
		else this.pendingResumes.set(waitpoint.runId, { payload });
	}

	private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
		const chunks: Buffer[] = [];
		for await (const chunk of req) chunks.push(chunk as Buffer);
		const raw = Buffer.concat(chunks);
		const url = new URL(req.url ?? '/', 'http://127.0.0.1');
		const answer = (status: number, body?: unknown) => {
			res.writeHead(status, { 'content-type': 'application/json' });
			res.end(body === undefined ? '' : JSON.stringify(body));
		};
		try {
			if (url.pathname === '/api/v1/store-entries') return await this.store(req.method ?? 'GET', url, raw, answer);
			if (url.pathname === '/api/v1/step-files' && req.method === 'POST') return this.stepFile(raw, answer);
			if (url.pathname === '/api/v1/waitpoints' && req.method === 'POST') return answer(201, this.createForPause(JSON.parse(raw.toString('utf8')) as CreateWaitpoint));
			const resume = /^\/api\/v1\/flow-runs\/([^/]+)\/waitpoints\/([^/]+)$/.exec(url.pathname);
			if (resume && req.method === 'POST') return answer(200, this.resumeSignal(resume[1], resume[2], req, url, raw));
			answer(404, { message: `no route ${req.method} ${url.pathname}` });
		} catch (error) {
			answer(500, { message: String(error) });
		}
	}

	/**
	 * The next `count` store reads of keys containing `keyPart` are answered together, once all
	 * have come (or after 30 s): engine processes that read "not seen yet" at the same moment, the
	 * race a real instance's separate processes run, made certain instead of left to timing.
	 */
	gatherStoreReads(keyPart: string, count: number): void {
		const gathering = { keyPart, count, held: [] as Array<() => void> };
		this.gathering = gathering;
		setTimeout(() => this.releaseGathered(gathering), 30_000).unref();
	}

	private releaseGathered(gathering: NonNullable<EngineServer['gathering']>): void {
		if (this.gathering === gathering) this.gathering = undefined;
		for (const release of gathering.held.splice(0)) release();
	}

	private async store(method: string, url: URL, raw: Buffer, answer: (status: number, body?: unknown) => void): Promise<void> {
		this.storeRequests++;
		const gathering = this.gathering;
		if (method === 'GET' && gathering && (url.searchParams.get('key') ?? '').includes(gathering.keyPart)) {
			await new Promise<void>((resolve) => {
				gathering.held.push(resolve);
				if (gathering.held.length >= gathering.count) this.releaseGathered(gathering);
			});
		}
		if (method === 'POST') {
			const { key, value } = JSON.parse(raw.toString('utf8')) as { key: string; value: unknown };
			if (this.refuseStoreWrite?.(key, value)) return answer(500, { message: 'Failed to save the store entry' });
			this.storeEntries.set(key, value);
			return answer(200, { key, value });
		}
		const key = url.searchParams.get('key') ?? '';
		if (method === 'DELETE') {
			this.storeEntries.delete(key);
			return answer(200);
		}
		if (!this.storeEntries.has(key)) return answer(404, { message: 'not found' });
		answer(200, { key, value: this.storeEntries.get(key) });
	}

	private stepFile(raw: Buffer, answer: (status: number, body?: unknown) => void): void {
		const { fileName, stepName, base64 } = JSON.parse(raw.toString('utf8')) as { fileName: string; stepName: string; base64: string };
		const data = Buffer.from(base64, 'base64');
		if (this.failNextFileWrites > 0) {
			this.failNextFileWrites--;
			return answer(500, { message: 'Failed to upload the file: the server could not store it' });
		}
		if (data.length > this.maxFileSizeMb * 1024 * 1024) {
			return answer(413, { message: `File size ${(data.length / 1024 / 1024).toFixed(1)} MB is larger than the limit of ${this.maxFileSizeMb} MB` });
		}
		const url = `${this.internalApiUrl}v1/step-files/signed?token=file_${this.files.length + 1}`;
		this.files.push({ url, fileName, stepName, data });
		answer(200, { url });
	}

	private createForPause({ flowRunId, stepName, type, resumeDateTime }: CreateWaitpoint): Pick<Waitpoint, 'id' | 'resumeUrl'> {
		const live = [...this.live.values()].filter((waitpoint) => waitpoint.runId === flowRunId);
		const found = live.find((waitpoint) => waitpoint.status === 'COMPLETED') ?? live.find((waitpoint) => waitpoint.stepName === stepName);
		if (found) return { id: found.id, resumeUrl: found.resumeUrl };
		const id = `wp_${this.waitpoints.length + 1}`;
		const waitpoint: Waitpoint = { id, runId: flowRunId, stepName, type, resumeDateTime, resumeUrl: `${this.publicApiUrl}v1/flow-runs/${flowRunId}/waitpoints/${id}`, status: 'PENDING' };
		this.waitpoints.push(waitpoint);
		this.live.set(id, waitpoint);
		return { id, resumeUrl: waitpoint.resumeUrl };
	}

	/** A POST to a resume URL: the request as the server hands it to the engine as `resumePayload`. */
	private resumeSignal(runId: string, waitpointId: string, req: http.IncomingMessage, url: URL, raw: Buffer): Record<string, never> {
		const rawBody = raw.toString('utf8');
		let body: unknown = rawBody;
		try {
			body = JSON.parse(rawBody);
		} catch {
			// Kept as text, as the server does for a body that is not JSON.
		}
		const headers: Record<string, string> = {};
		for (const [name, value] of Object.entries(req.headers)) headers[name] = String(value);
		const payload: ResumePayload = { body, headers, queryParams: Object.fromEntries(url.searchParams) };
		const status = this.runStatus.get(runId);
		const waitpoint = this.live.get(waitpointId);
		if (this.loseResumes) return {};
		if (status === 'PAUSED') {
			if (waitpoint && waitpoint.runId === runId) this.resumeRun(waitpoint, payload);
			else this.ignoredResumes.push({ runId, waitpointId });
		} else if (status === 'RUNNING') {
			// Buffered: the run resumes with it as soon as it pauses.
			this.bufferedResumes++;
			if (waitpoint && waitpoint.status === 'PENDING') Object.assign(waitpoint, { status: 'COMPLETED', resumePayload: payload });
			else if (![...this.live.values()].some((other) => other.runId === runId)) {
				const id = `wp_${this.waitpoints.length + 1}`;
				const preCompleted: Waitpoint = { id, runId, stepName: '', type: 'WEBHOOK', resumeUrl: '', status: 'COMPLETED', resumePayload: payload };
				this.waitpoints.push(preCompleted);
				this.live.set(id, preCompleted);
			}
		} else {
			this.ignoredResumes.push({ runId, waitpointId });
		}
		return {};
	}
}
