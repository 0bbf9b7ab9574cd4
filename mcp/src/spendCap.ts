import type { GenerateVideoRequest, JobRecord } from '../../core/types';
import type { SpendCap } from './settings';
import { Doc } from './state/records';
import type { StateStore } from './state/store';

/** A hold on the cap for a create in flight lapses after this: a process killed meanwhile cannot hold it for ever. */
const HOLD_LAPSE_MS = 120_000;
/** Jobs older than any period the cap may have are dropped: the record stays small. */
const KEEP_JOBS_MS = 31 * 24 * 3_600_000;

export interface SpendState {
	/** The credits each job made on the key holds, as the service last reported them. */
	jobs: Record<string, { credits: number; atMs: number }>;
	/** What a second of video costs by resolution, as learned from the service's answers. */
	creditsPerSecond: Record<string, number>;
	/** Creates in flight, by hold id: their expected price, held against the cap until answered. */
	holds: Record<string, { credits: number; untilMs: number }>;
}

/** A create that would take the key past the user's cap: nothing was sent. */
export class SpendCapError extends Error {
	readonly code = 'spend_cap_reached';
}

/**
 * The user's cap on credits over a period, counted from what the service reports for the jobs the
 * server made on the key, in every process that shares its records: a job's reserved credits
 * (`creditsQueued`) until it ends, then what it was charged (`creditsUsed`; a failed job releases
 * its credits). A create is refused when what was spent plus what creates in flight hold plus its
 * own price, as learned from earlier jobs of its resolution, would pass the cap. Until a price is
 * known a create is let through only when nothing is in flight, so that calls at once, in any
 * process, cannot pass the cap together. Each check and hold is one atomic step on the record.
 */
export class SpendGuard {
	constructor(
		private readonly cap: SpendCap | undefined,
		private readonly store: StateStore,
		private readonly now: () => number,
	) {}

	/** Holds this create's expected price against the cap, or throws SpendCapError; release() afterwards. */
	async reserve(fingerprint: string, request: GenerateVideoRequest): Promise<{ release(): Promise<void> }> {
		const cap = this.cap;
		if (!cap) return { release: async () => undefined };
		const doc = this.doc(fingerprint);
		const holdId = `${process.pid}:${this.now()}:${Math.random()}`;
		await doc.change((key) => {
			const now = this.now();
			for (const [id, hold] of Object.entries(key.holds)) if (hold.untilMs <= now) delete key.holds[id];
			const periodStart = now - cap.periodHours * 3_600_000;
			const spent = Object.values(key.jobs).filter((job) => job.atMs >= periodStart).reduce((sum, job) => sum + job.credits, 0);
			const holds = Object.values(key.holds);
			const held = holds.reduce((sum, hold) => sum + hold.credits, 0);
			const rate = key.creditsPerSecond[request.resolution];
			const price = rate === undefined ? undefined : rate * request.duration;
			const inFlight = holds.length > 0;
			if (spent + held + (price ?? 0) > cap.credits || (price === undefined && (spent + held >= cap.credits || inFlight))) {
				throw new SpendCapError(refusal(cap, spent, held, price, inFlight));
			}
			key.holds[holdId] = { credits: price ?? 0, untilMs: now + HOLD_LAPSE_MS };
		});
		return {
			release: () =>
				doc.change((key) => {
					delete key.holds[holdId];
				}),
		};
	}

	/** Notes what the service says a job of this key holds or was charged. */
	async observe(fingerprint: string, job: JobRecord, request?: GenerateVideoRequest): Promise<void> {
		if (!this.cap) return;
		const credits = job.status === 'failed' ? (job.creditsUsed ?? 0) : job.status === 'done' ? (job.creditsUsed ?? job.creditsQueued) : job.creditsQueued;
		if (credits === undefined) return;
		await this.doc(fingerprint).change((key) => {
			const now = this.now();
			key.jobs[job.id] = { credits, atMs: key.jobs[job.id]?.atMs ?? now };
			if (request && job.creditsQueued !== undefined && request.duration > 0) key.creditsPerSecond[request.resolution] = job.creditsQueued / request.duration;
			for (const [id, record] of Object.entries(key.jobs)) if (now - record.atMs > KEEP_JOBS_MS) delete key.jobs[id];
		});
	}

	private doc(fingerprint: string): Doc<SpendState> {
		return new Doc(this.store, `spend-${fingerprint}`, () => ({ jobs: {}, creditsPerSecond: {}, holds: {} }));
	}
}

function refusal(cap: SpendCap, spent: number, held: number, price: number | undefined, inFlight: boolean): string {
	const period = `${cap.periodHours} h`;
	const cost = price === undefined ? 'its price is not known yet (the service reports it once a job of this resolution is made)' : `it would cost about ${Math.round(price)} credits`;
	const busy = price === undefined && held === 0 && inFlight ? ' Another create is in flight; call again once it has answered.' : '';
	return (
		`Not created: your spend cap is ${cap.credits} credits per ${period}, ${Math.round(spent)} are spent in the last ${period}` +
		`${held > 0 ? ` and ${Math.round(held)} are held by creates in flight` : ''}, and ${cost}.${busy} Nothing was sent or charged. ` +
		'Ask the user whether to raise OMNI_VIDEO_SPEND_CAP_CREDITS, or try a shorter or lower-resolution video, or wait for the period to pass.'
	);
}
