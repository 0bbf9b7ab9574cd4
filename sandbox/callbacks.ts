/* eslint-disable @n8n/community-nodes/no-restricted-globals -- dev tooling, never shipped in the n8n package */
import type { VirtualClock } from './clock';
import type { JobRecordJson, SandboxJob } from './jobs';
import { newId } from './httpUtil';
import type { ServiceSwitches } from './service';
import { standardWebhookSignature } from './signing';

/** docs/api.md#callbacks: retries at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (virtual time). */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
const RESPONSE_DEADLINE_MS = 15_000;
/** Even at high speed factors a local receiver gets this long (real) to answer: a loaded test machine can take seconds. */
const MIN_REAL_DEADLINE_MS = 5_000;

export interface CallbackAttempt {
	jobId: string;
	url: string;
	webhookId: string;
	attempt: number;
	at: string;
	status?: number;
	/** The start of the receiver's answer (for a refusal: why), as evidence for tests. */
	answer?: string;
	error?: string;
	/** `lost`: the delivery was dropped by a drawn fault (sandbox/faultRates.ts), none of its attempts sent. */
	outcome: 'delivered' | 'retrying' | 'stopped-by-410' | 'gave-up' | 'lost';
}

interface Delivery {
	job: SandboxJob;
	url: string;
	webhookId: string;
	body: string;
}

/** How callbacks go out: the service profile's switches (sandbox/service.ts) and whose clock signs. */
export interface CallbackPolicy {
	signOnSandboxClock?: boolean;
	signing?: ServiceSwitches['callbackSigning'];
	delivery?: ServiceSwitches['callbackDelivery'];
	failedJobs?: boolean;
}

/**
 * Delivery of each terminal transition to the job's callbackUrl: by default signed and at least
 * once (retried on the schedule); a service profile may send it unsigned, once, or never, and none
 * for a failed job.
 */
export class Callbacks {
	readonly attempts: CallbackAttempt[] = [];
	private cancels: Array<() => void> = [];
	private inFlight = new Set<AbortController>();
	private readonly policy: Required<CallbackPolicy>;

	constructor(
		private readonly clock: VirtualClock,
		private readonly secret: () => string,
		policy: CallbackPolicy = {},
		/** Whether this delivery is lost, drawn once per delivery. */
		private readonly isLost: () => boolean = () => false,
	) {
		this.policy = { signOnSandboxClock: false, signing: 'signed', delivery: 'retried', failedJobs: true, ...policy };
	}

	deliver(job: SandboxJob, record: JobRecordJson): void {
		if (!job.body.callbackUrl || this.policy.delivery === 'never') return;
		if (record.status === 'failed' && !this.policy.failedJobs) return;
		const delivery: Delivery = { job, url: job.body.callbackUrl, webhookId: newId('msg'), body: JSON.stringify(record) };
		if (this.isLost()) {
			this.attempts.push({ jobId: job.id, url: delivery.url, webhookId: delivery.webhookId, attempt: 1, at: new Date(this.clock.now()).toISOString(), outcome: 'lost' });
			return;
		}
		const copies = job.duplicateCallbacks ? 2 : 1;
		for (let i = 0; i < copies; i++) this.schedule(delivery, 0, job.callbackDelayMs);
	}

	close(): void {
		for (const cancel of this.cancels) cancel();
		this.cancels = [];
		for (const controller of this.inFlight) controller.abort();
	}

	reset(): void {
		this.close();
		this.attempts.length = 0;
	}

	/** Standard Webhooks headers: the id stays across retries, the timestamp is the attempt's. */
	private signature(delivery: Delivery, timestamp: number): Record<string, string> {
		return {
			'webhook-id': delivery.webhookId,
			'webhook-timestamp': String(timestamp),
			'webhook-signature': standardWebhookSignature(this.secret(), delivery.webhookId, timestamp, delivery.body),
		};
	}

	private schedule(delivery: Delivery, attempt: number, delayMs: number): void {
		this.cancels.push(this.clock.after(delayMs, () => void this.attempt(delivery, attempt)));
	}

	private async attempt(delivery: Delivery, attempt: number): Promise<void> {
		// The timestamp is when the request is sent, in real time: receivers check it against their
		// own clock, which the sandbox's speed factor does not move (unless they run on the sandbox's).
		const timestamp = Math.floor((this.policy.signOnSandboxClock ? this.clock.now() : Date.now()) / 1000);
		const record: CallbackAttempt = {
			jobId: delivery.job.id,
			url: delivery.url,
			webhookId: delivery.webhookId,
			attempt: attempt + 1,
			at: new Date(this.clock.now()).toISOString(),
			outcome: 'retrying',
		};
		this.attempts.push(record);
		const controller = new AbortController();
		this.inFlight.add(controller);
		// A clock standing still (speed 0) has no real equivalent of the deadline: the minimum applies.
		const realDeadline = this.clock.realMs(RESPONSE_DEADLINE_MS);
		const deadline = setTimeout(() => controller.abort(), Number.isFinite(realDeadline) ? Math.max(MIN_REAL_DEADLINE_MS, realDeadline) : MIN_REAL_DEADLINE_MS);
		let retryAfterMs = 0;
		try {
			const response = await fetch(delivery.url, {
				method: 'POST',
				redirect: 'manual',
				signal: controller.signal,
				headers: {
					'Content-Type': 'application/json',
					'User-Agent': 'omni-video-sandbox',
					...(this.policy.signing === 'signed' ? this.signature(delivery, timestamp) : {}),
				},
				body: delivery.body,
			});
			record.answer = (await response.text().catch(() => '')).slice(0, 200);
			record.status = response.status;
			if (response.status >= 200 && response.status < 300) {
				record.outcome = 'delivered';
				return;
			}
			if (response.status === 410) {
				record.outcome = 'stopped-by-410';
				return;
			}
			const retryAfter = Number(response.headers.get('retry-after'));
			if ((response.status === 429 || response.status === 503) && Number.isFinite(retryAfter)) retryAfterMs = retryAfter * 1000;
		} catch (error) {
			record.error = controller.signal.aborted ? 'no answer within 15 s' : (error as Error).message;
		} finally {
			clearTimeout(deadline);
			this.inFlight.delete(controller);
		}
		if (this.policy.delivery === 'once' || attempt >= RETRY_SCHEDULE_MS.length) {
			record.outcome = 'gave-up';
			return;
		}
		this.schedule(delivery, attempt + 1, Math.max(RETRY_SCHEDULE_MS[attempt], retryAfterMs));
	}
}
