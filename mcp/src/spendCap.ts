import type { GenerateVideoRequest, JobRecord } from '../../core/types';
import type { SpendCap } from './settings';
import type { StateFile } from './stateFile';

export interface SpendState {
	/** By key fingerprint: the credits each job made here holds, as the service last reported them. */
	spend: Record<string, { jobs: Record<string, { credits: number; atMs: number }>; creditsPerSecond: Record<string, number> }>;
}

/** A create that would take the key past the user's cap: nothing was sent. */
export class SpendCapError extends Error {
	readonly code = 'spend_cap_reached';
}

/**
 * The user's cap on credits over a period, counted from what the service reports for the jobs
 * this server made: a job's reserved credits (`creditsQueued`) until it ends, then what it was
 * charged (`creditsUsed`; a failed job releases its credits). A create is refused when what was
 * spent plus its own price, as learned from earlier jobs of its resolution, would pass the cap.
 * Until a price is known a create is let through only when nothing is in flight, so that calls at
 * once cannot pass the cap together.
 */
export class SpendGuard {
	private readonly pending = new Map<string, number>();

	constructor(
		private readonly cap: SpendCap | undefined,
		private readonly file: StateFile<SpendState>,
		private readonly now: () => number,
	) {}

	/** Holds this create's expected price against the cap, or throws SpendCapError; release() afterwards. */
	reserve(fingerprint: string, request: GenerateVideoRequest): { release(): void } {
		if (!this.cap) return { release: () => undefined };
		const key = this.account(fingerprint);
		const periodStart = this.now() - this.cap.periodHours * 3_600_000;
		const spent = Object.values(key.jobs).filter((job) => job.atMs >= periodStart).reduce((sum, job) => sum + job.credits, 0);
		const rate = key.creditsPerSecond[request.resolution];
		const price = rate === undefined ? undefined : rate * request.duration;
		const held = [...this.pending.entries()].filter(([id]) => id.startsWith(`${fingerprint}:`)).reduce((sum, [, credits]) => sum + credits, 0);
		const period = `${this.cap.periodHours} h`;
		if (spent + held + (price ?? 0) > this.cap.credits || (price === undefined && (spent + held >= this.cap.credits || this.inFlight(fingerprint)))) {
			const cost = price === undefined ? 'its price is not known yet (the service reports it once a job of this resolution is made)' : `it would cost about ${Math.round(price)} credits`;
			const busy = price === undefined && held === 0 && this.inFlight(fingerprint) ? ' Another create is in flight; call again once it has answered.' : '';
			throw new SpendCapError(
				`Not created: your spend cap is ${this.cap.credits} credits per ${period}, ${Math.round(spent)} are spent in the last ${period}` +
					`${held > 0 ? ` and ${Math.round(held)} are held by creates in flight` : ''}, and ${cost}.${busy} Nothing was sent or charged. ` +
					'Ask the user whether to raise OMNI_VIDEO_SPEND_CAP_CREDITS, or try a shorter or lower-resolution video, or wait for the period to pass.',
			);
		}
		const id = `${fingerprint}:${Math.random()}`;
		this.pending.set(id, price ?? 0);
		return { release: () => void this.pending.delete(id) };
	}

	/** Notes what the service says a job of this key holds or was charged. */
	observe(fingerprint: string, job: JobRecord, request?: GenerateVideoRequest): void {
		const credits = job.status === 'failed' ? (job.creditsUsed ?? 0) : job.status === 'done' ? (job.creditsUsed ?? job.creditsQueued) : job.creditsQueued;
		if (credits === undefined) return;
		this.file.update((state) => {
			const key = (state.spend[fingerprint] ??= { jobs: {}, creditsPerSecond: {} });
			const known = key.jobs[job.id];
			key.jobs[job.id] = { credits, atMs: known?.atMs ?? this.now() };
			if (request && job.creditsQueued !== undefined && request.duration > 0) key.creditsPerSecond[request.resolution] = job.creditsQueued / request.duration;
			// Jobs older than any period the cap may have are dropped: the file stays small.
			for (const [id, record] of Object.entries(key.jobs)) if (this.now() - record.atMs > 31 * 24 * 3_600_000) delete key.jobs[id];
		});
	}

	private inFlight(fingerprint: string): boolean {
		return [...this.pending.keys()].some((id) => id.startsWith(`${fingerprint}:`));
	}

	private account(fingerprint: string) {
		return this.file.state.spend[fingerprint] ?? { jobs: {}, creditsPerSecond: {} };
	}
}
