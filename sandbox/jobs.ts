import type { GenerateVideoRequest } from '../core/types';
import type { Accounts, ApiKey } from './accounts';
import type { VirtualClock } from './clock';
import { newId } from './httpUtil';
import type { RenderTimes } from './renderTimes';

/** A validated create body: the same shape core sends. */
export type GenerateBody = GenerateVideoRequest;

export type FailureCode = 'content_policy' | 'invalid_input' | 'input_fetch_failed' | 'timeout' | 'internal';

const FAILURE_MESSAGES: Record<FailureCode, string> = {
	content_policy: 'Prompt rejected by content policy',
	invalid_input: 'The source file could not be used',
	input_fetch_failed: 'The source file could not be fetched',
	timeout: 'Rendering timed out',
	internal: 'Internal rendering error',
};

/** The share of the render time a job spends queued before processing starts. */
const QUEUED_SHARE = 0.1;
/** How long a job that fails with `timeout` renders first: the service gives up on a stuck render. */
const TIMED_OUT_RENDER_MS = 3_600_000;

export interface SandboxJob {
	id: string;
	key: ApiKey;
	body: GenerateBody;
	price: number;
	createdAt: number;
	startsAt: number;
	endsAt: number;
	failure?: FailureCode;
	finished: boolean;
	largeOutput: boolean;
	callbackDelayMs: number;
	duplicateCallbacks: boolean;
}

export interface JobRecordJson {
	id: string;
	status: 'queued' | 'processing' | 'done' | 'failed';
	model: 'omni-video';
	progress?: number;
	resultUrls?: string[];
	creditsQueued?: number;
	creditsUsed?: number;
	createdAt: string;
	completedAt?: string;
	error?: string;
	errorCode?: FailureCode;
}

/** The job store and lifecycle: queued → processing → done | failed, on the virtual clock. */
export class Jobs {
	readonly all = new Map<string, SandboxJob>();
	private cancels: Array<() => void> = [];

	constructor(
		private readonly clock: VirtualClock,
		private readonly accounts: Accounts,
		private readonly cdnUrl: () => string,
		private readonly onFinished: (job: SandboxJob) => void,
		private readonly renderTimes: RenderTimes,
		/** False: records never carry `progress`, as from a service that reports none. */
		private readonly reportProgress = true,
	) {}

	create(
		key: ApiKey,
		body: GenerateBody,
		price: number,
		options: { failure?: FailureCode; largeOutput: boolean; callbackDelayMs: number; duplicateCallbacks: boolean },
	): SandboxJob {
		const now = this.clock.now();
		// Drawn even when unused, so that the jobs after it get the render times they always had.
		const drawn = this.renderTimes.next(body.resolution, body.duration);
		const renderMs = options.failure === 'timeout' ? TIMED_OUT_RENDER_MS : drawn;
		const job: SandboxJob = {
			id: newId('job'),
			key,
			body,
			price,
			createdAt: now,
			startsAt: now + renderMs * QUEUED_SHARE,
			endsAt: now + renderMs,
			finished: false,
			...options,
		};
		this.all.set(job.id, job);
		this.accounts.reserve(key, price);
		this.cancels.push(this.clock.at(job.endsAt, () => this.finish(job)));
		return job;
	}

	/** Jobs of the account still queued or processing (the concurrency count). */
	activeCount(accountId: string): number {
		let count = 0;
		for (const job of this.all.values()) if (!job.finished && job.key.account.id === accountId) count++;
		return count;
	}

	find(id: string, accountId: string): SandboxJob | undefined {
		const job = this.all.get(id);
		return job && job.key.account.id === accountId ? job : undefined;
	}

	resultUrl(job: SandboxJob): string {
		return `${this.cdnUrl()}/omni/${job.key.account.userId}/${job.id}/output.mp4`;
	}

	/** The job as the API shows it now. */
	record(job: SandboxJob): JobRecordJson {
		const now = this.clock.now();
		const base = { id: job.id, model: 'omni-video' as const, createdAt: new Date(job.createdAt).toISOString() };
		if (!job.finished) {
			if (now < job.startsAt) return { ...base, status: 'queued', creditsQueued: job.price };
			if (!this.reportProgress) return { ...base, status: 'processing', creditsQueued: job.price };
			const progress = Math.min(99, Math.floor(((now - job.startsAt) / (job.endsAt - job.startsAt)) * 100));
			return { ...base, status: 'processing', progress, creditsQueued: job.price };
		}
		const completedAt = new Date(job.endsAt).toISOString();
		if (job.failure) {
			return { ...base, status: 'failed', error: FAILURE_MESSAGES[job.failure], errorCode: job.failure, creditsQueued: job.price, creditsUsed: 0, completedAt };
		}
		return {
			...base,
			status: 'done',
			...(this.reportProgress ? { progress: 100 } : {}),
			resultUrls: [this.resultUrl(job)],
			creditsQueued: job.price,
			creditsUsed: job.price,
			completedAt,
		};
	}

	close(): void {
		for (const cancel of this.cancels) cancel();
		this.cancels = [];
	}

	reset(): void {
		this.close();
		this.all.clear();
	}

	private finish(job: SandboxJob): void {
		if (job.finished) return;
		job.finished = true;
		if (job.failure) this.accounts.release(job.key, job.price);
		else this.accounts.settle(job.key, job.price);
		this.onFinished(job);
	}
}
