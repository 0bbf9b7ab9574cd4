/* eslint-disable @n8n/community-nodes/no-restricted-globals -- dev tooling, never shipped in the n8n package */
import { Accounts, type ApiKey } from './accounts';
import { Callbacks } from './callbacks';
import { VirtualClock } from './clock';
import type { SandboxConfig } from './config';
import { FaultRates } from './faultRates';
import { IdempotencyStore } from './idempotency';
import { Jobs } from './jobs';
import { RateWindows } from './rateLimits';
import { RenderTimes } from './renderTimes';
import { errorReply, type Reply } from './httpUtil';
import type { ScenarioName } from './scenarios';
import { Uploads } from './uploads';

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

/** Everything the routes read and change: made once per sandbox, emptied by reset. */
export class SandboxState {
	readonly clock: VirtualClock;
	readonly accounts: Accounts;
	readonly jobs: Jobs;
	readonly callbacks: Callbacks;
	readonly uploads = new Uploads();
	readonly idempotency = new IdempotencyStore();
	readonly windows = new RateWindows();
	/** Requests still refused per key by a `rate-limit-storm`. */
	readonly storms = new Map<string, number>();
	readonly journal: JournalEntry[] = [];
	readonly faults: FaultRates;
	/** Known once the server listens. */
	baseUrl = '';
	private readonly pending = new Set<ReturnType<typeof setTimeout>>();

	constructor(readonly config: SandboxConfig) {
		this.clock = new VirtualClock(config.speed);
		this.accounts = new Accounts(config);
		this.faults = new FaultRates(config.faultRates);
		this.callbacks = new Callbacks(
			this.clock,
			() => config.webhookSecret,
			{
				signOnSandboxClock: this.clientsOnSandboxClock,
				signing: config.callbackSigning,
				delivery: config.callbackDelivery,
				failedJobs: config.failedJobCallbacks,
			},
			() => this.faults.fails('lostCallbacks'),
		);
		const jobs: Jobs = new Jobs(
			this.clock,
			this.accounts,
			() => config.cdnUrl ?? this.baseUrl,
			(job) => this.callbacks.deliver(job, jobs.record(job)),
			new RenderTimes(config.renderTimes),
			config.reportProgress,
		);
		this.jobs = jobs;
	}

	get clientsOnSandboxClock(): boolean {
		return this.config.clientClock === 'sandbox';
	}

	/** Retry-After: the seconds a client must wait on its own clock. */
	retryAfterSeconds(virtualMs: number): number {
		const ms = this.clientsOnSandboxClock ? virtualMs : this.clock.realMs(virtualMs);
		return Math.max(1, Math.ceil(ms / 1000));
	}

	/** Resolves after `ms` real milliseconds, or never once the sandbox closes. */
	later(ms: number): Promise<void> {
		return new Promise<void>((resolve) => {
			const timer = setTimeout(() => {
				this.pending.delete(timer);
				resolve();
			}, ms);
			this.pending.add(timer);
		});
	}

	/** X-RateLimit-*, unless the service profile sends none (`rateLimitHeaders: false`). */
	rateHeaders(key: ApiKey): Record<string, string> {
		const limits = key.account.limits;
		if (!limits || !this.config.rateLimitHeaders) return {};
		const state = this.windows.peek(key.key, limits, this.clock.now());
		return {
			'X-RateLimit-Limit': String(state.limit),
			'X-RateLimit-Remaining': String(state.remaining),
			'X-RateLimit-Reset': String(Math.ceil(state.resetAt / 1000)),
		};
	}

	/**
	 * A 429 as the service profile answers it: without Retry-After (`retryAfter: false`), and with
	 * one code for both limits (`distinctLimitCodes: false`), so that nothing tells a full window
	 * from too many jobs.
	 */
	tooManyRequests(reply: Reply): Reply {
		if (reply.status !== 429) return reply;
		const { config } = this;
		let answer = reply;
		if (!config.retryAfter) {
			const headers = Object.fromEntries(Object.entries(answer.headers).filter(([name]) => name.toLowerCase() !== 'retry-after'));
			answer = { ...answer, headers };
		}
		if (!config.distinctLimitCodes && answer.isError) answer = { ...errorReply(429, 'too_many_requests', 'Too many requests.'), headers: answer.headers };
		return answer;
	}

	/** Back to the state at start: no jobs, fresh balances, empty journal. */
	reset(): void {
		this.jobs.reset();
		this.callbacks.reset();
		this.uploads.reset();
		this.idempotency.reset();
		this.windows.reset();
		this.storms.clear();
		this.journal.length = 0;
		this.faults.reset();
		const fresh = new Accounts(this.config);
		this.accounts.accounts.clear();
		this.accounts.keys.clear();
		for (const [id, account] of fresh.accounts) this.accounts.accounts.set(id, account);
		for (const [id, key] of fresh.keys) this.accounts.keys.set(id, key);
	}

	/** Stops every timer; the server closes its sockets itself. */
	close(): void {
		this.clock.close();
		this.jobs.close();
		this.callbacks.close();
		for (const timer of this.pending) clearTimeout(timer);
	}
}
