import type { Clock, HttpRequest, HttpResponse, Transport } from '../../core/transport';
import type { PlanLimits } from '../../core/types';
import { TransportFailure, type TransportFailureKind } from '../../core/errors';

/**
 * An in-memory stand-in for the API on virtual time, for core's unit tests only (the contract
 * tests use the real sandbox over HTTP). It keeps the plan strictly — sliding windows, account
 * concurrency — and records every request, so tests can prove the client never overstepped.
 */

export interface RecordedRequest {
	at: number;
	method: string;
	url: string;
	headers: Record<string, string>;
	body: unknown;
	viaApi: boolean;
}

type Scripted = { response: HttpResponse } | { failure: TransportFailureKind };

interface FakeJob {
	id: string;
	createdAt: number;
	doneAt: number;
	fail?: string;
}

export class FakeApi {
	readonly requests: RecordedRequest[] = [];
	readonly rejected429: RecordedRequest[] = [];
	readonly jobs = new Map<string, FakeJob>();
	/** Responses to hand out before any normal handling, in order. */
	readonly script: Scripted[] = [];
	renderMs = 60_000;
	private nextId = 1;
	maxConcurrentSeen = 0;

	constructor(
		private readonly clock: Clock,
		/** What the fake service enforces (may differ from what the client believes). */
		public limits: PlanLimits,
		readonly baseUrl = 'https://api.omni.test',
	) {}

	readonly transport: Transport = {
		api: (request) => this.handle(request, true),
		plain: (request) => this.handle(request, false),
	};

	apiRequests(): RecordedRequest[] {
		return this.requests.filter((r) => r.viaApi);
	}

	creates(): RecordedRequest[] {
		return this.apiRequests().filter((r) => r.method === 'POST' && r.url.endsWith('/api/v1/generate'));
	}

	lookups(): RecordedRequest[] {
		return this.apiRequests().filter((r) => r.method === 'GET');
	}

	private active(now: number): number {
		let count = 0;
		for (const job of this.jobs.values()) if (job.doneAt > now) count++;
		return count;
	}

	private async handle(request: HttpRequest, viaApi: boolean): Promise<HttpResponse> {
		const now = this.clock.now();
		const recorded: RecordedRequest = {
			at: now,
			method: request.method,
			url: request.url,
			headers: { ...request.headers },
			body: request.body,
			viaApi,
		};
		this.requests.push(recorded);
		const scripted = this.script.shift();
		if (scripted) {
			if ('failure' in scripted) throw new TransportFailure(scripted.failure, `scripted ${scripted.failure}`);
			return scripted.response;
		}
		if (!viaApi) return json(200, {});

		// Like the sandbox, refused requests do not count against the windows.
		const counted = this.apiRequests().filter((r) => !this.rejected429.includes(r));
		const inMinute = counted.filter((r) => r.at > now - 60_000).length;
		const inHour = counted.filter((r) => r.at > now - 3_600_000).length;
		if (inMinute > this.limits.requestsPerMinute || inHour > this.limits.requestsPerHour) {
			this.rejected429.push(recorded);
			return json(429, { error: { code: 'rate_limited', message: 'Too many requests', requestId: 'req_fake' } }, { 'retry-after': '10' });
		}
		const path = new URL(request.url).pathname;
		if (request.method === 'POST' && path === '/api/v1/generate') {
			if (this.active(now) >= this.limits.concurrentJobs) {
				this.rejected429.push(recorded);
				return json(429, { error: { code: 'concurrency_limited', message: 'Too many jobs', requestId: 'req_fake' } }, { 'retry-after': '5' });
			}
			const id = `job_${this.nextId++}`;
			const prompt = (request.body as { prompt?: string }).prompt ?? '';
			this.jobs.set(id, {
				id,
				createdAt: now,
				doneAt: now + this.renderMs,
				fail: prompt.includes('[fail]') ? 'Prompt rejected by content policy' : undefined,
			});
			this.maxConcurrentSeen = Math.max(this.maxConcurrentSeen, this.active(now));
			return json(202, { id, status: 'queued', creditsQueued: 80 });
		}
		if (request.method === 'GET' && path.startsWith('/api/v1/jobs/')) {
			const id = decodeURIComponent(path.slice('/api/v1/jobs/'.length));
			const job = this.jobs.get(id);
			if (!job) return json(404, { error: { code: 'not_found', message: `No job ${id}`, requestId: 'req_fake' } });
			if (now < job.doneAt) {
				const progress = Math.floor(((now - job.createdAt) / (job.doneAt - job.createdAt)) * 100);
				return json(200, { id, status: 'processing', progress });
			}
			if (job.fail) return json(200, { id, status: 'failed', error: job.fail, errorCode: 'content_policy' });
			return json(200, {
				id,
				status: 'done',
				resultUrls: [`https://cdn.omni.test/omni/u1/${id}/output.mp4`],
				creditsUsed: 80,
				createdAt: new Date(job.createdAt).toISOString(),
				completedAt: new Date(job.doneAt).toISOString(),
			});
		}
		if (request.method === 'POST' && path === '/api/upload') {
			return json(200, {
				uploadUrl: 'https://storage.omni.test/put/abc?sig=1',
				fileUrl: 'https://storage.omni.test/files/abc.png',
				method: 'PUT',
				headers: { 'Content-Type': (request.body as { contentType: string }).contentType },
			});
		}
		return json(404, { error: { code: 'not_found', message: 'No route', requestId: 'req_fake' } });
	}
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
	return { status, headers: { 'content-type': 'application/json', 'x-request-id': 'req_fake', ...headers }, body };
}
