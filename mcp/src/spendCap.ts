import type { GenerateVideoRequest, JobRecord } from '../../core/types';
import type { SpendCap } from './settings';
import { recordStep } from './state/recordStep';
import type { StateStore } from './state/store';

/** A hold on the cap for a create in flight lapses after this: a process killed meanwhile cannot hold it for ever. */
const HOLD_LAPSE_MS = 120_000;
const HOUR_MS = 3_600_000;
/** A period is counted in this many slices at most: the record stays small, the count exact to a sixtieth of the period. */
const SLICES = 60;

/**
 * Spending is counted with no cap set too, in slices of this period's: a cap set later (an admin's
 * `members cap`, a lower OMNI_VIDEO_SPEND_CAP_CREDITS) holds at once against what was spent before it.
 */
const UNCAPPED_PERIOD_HOURS = 24;

/** How the cap's period is counted: slices of a sixtieth of it (a minute at least), kept for two periods (a day at least). */
export function spendSlices(cap: Pick<SpendCap, 'periodHours'> = { periodHours: UNCAPPED_PERIOD_HOURS }): { sliceMs: number; keepMs: number } {
	const periodMs = cap.periodHours * HOUR_MS;
	return { sliceMs: Math.max(60_000, Math.ceil(periodMs / SLICES)), keepMs: Math.max(24 * HOUR_MS, 2 * periodMs) };
}

/** A key's spending: credits by the slice of time its jobs were made in, prices learned, creates in flight. */
export interface SpendRecord {
	/** Credits of the key's jobs by the start of the slice each was made in (ms, as a string). */
	slices: Record<string, number>;
	/** What a second of video costs by resolution, as learned from the service's answers. */
	creditsPerSecond: Record<string, number>;
	/** Creates in flight, by hold id: their expected price, held against the cap until answered. */
	holds: Record<string, { credits: number; untilMs: number }>;
	/**
	 * The widest slice the record holds: slices written under another period (no cap, or a cap
	 * changed) are counted as that wide, so that one ending inside the period is never left out.
	 */
	sliceMs?: number;
}

/** What one job of the key holds or was charged, as the service last reported it, and when it was made. */
interface SpentRecord {
	credits: number;
	atMs: number;
	/** The slice its credits are in (absent in older records: the one its time falls in). */
	slice?: string;
}

export const spendRecordName = (fingerprint: string) => `spend:{${fingerprint}}`;
export const spentRecordName = (fingerprint: string, jobId: string) => `spent:{${fingerprint}}:${jobId}`;

const spendFrom = (value: unknown): SpendRecord => {
	const record = value as Partial<SpendRecord> | undefined;
	return { slices: record?.slices ?? {}, creditsPerSecond: record?.creditsPerSecond ?? {}, holds: record?.holds ?? {}, ...(record?.sliceMs ? { sliceMs: record.sliceMs } : {}) };
};

type Refused = { spent: number; held: number; price?: number; inFlight: boolean };

/**
 * Holds this create's price against the cap, or answers why not. A slice that began before the
 * period but ends within it counts whole: the cap errs on the side of the user's money, by at most
 * one slice's spending (a sixtieth of the period, or of the day's while no cap was set).
 */
const reserveSpend = recordStep<{ holdId: string; resolution: string; duration: number; cap: SpendCap; sliceMs: number; keepMs: number }, Refused | undefined>(
	'reserve spend',
	([value], { holdId, resolution, duration, cap, sliceMs, keepMs }, nowMs) => {
		const record = spendFrom(value);
		for (const [id, hold] of Object.entries(record.holds)) if (hold.untilMs <= nowMs) delete record.holds[id];
		const periodStart = nowMs - cap.periodHours * HOUR_MS;
		const widest = Math.max(sliceMs, record.sliceMs ?? 0);
		const spent = Object.entries(record.slices).reduce((sum, [start, credits]) => (Number(start) + widest > periodStart ? sum + credits : sum), 0);
		const holds = Object.values(record.holds);
		const held = holds.reduce((sum, hold) => sum + hold.credits, 0);
		const rate = record.creditsPerSecond[resolution];
		const price = rate === undefined ? undefined : rate * duration;
		const inFlight = holds.length > 0;
		// At or over the cap nothing goes, whatever its price; below it, a create goes when its price fits, or alone while that is unknown.
		if (spent + held >= cap.credits || spent + held + (price ?? 0) > cap.credits || (price === undefined && inFlight)) {
			return { writes: [undefined], answer: { spent, held, ...(price === undefined ? {} : { price }), inFlight } };
		}
		record.holds[holdId] = { credits: price ?? 0, untilMs: nowMs + HOLD_LAPSE_MS };
		return { writes: [{ value: record, expiresAtMs: nowMs + keepMs }], answer: undefined };
	},
	`local record = load(1) or {}
local slices = record.slices or {}
local rates = record.creditsPerSecond or {}
local holds = {}
local held, inFlight = 0, false
for id, hold in pairs(record.holds or {}) do
	if hold.untilMs > now then
		holds[id] = hold
		held = held + hold.credits
		inFlight = true
	end
end
local periodStart = now - args.cap.periodHours * ${HOUR_MS}
local widest = math.max(args.sliceMs, record.sliceMs or 0)
local spent = 0
for start, credits in pairs(slices) do if tonumber(start) + widest > periodStart then spent = spent + credits end end
local rate = rates[args.resolution]
local price = nil
if rate ~= nil then price = rate * args.duration end
if spent + held >= args.cap.credits or spent + held + (price or 0) > args.cap.credits or (price == nil and inFlight) then
	return answer({ spent = spent, held = held, price = price, inFlight = inFlight })
end
holds[args.holdId] = { credits = price or 0, untilMs = now + ${HOLD_LAPSE_MS} }
save(1, { slices = slices, creditsPerSecond = rates, holds = holds, sliceMs = record.sliceMs }, now + args.keepMs)
return nil`,
);

const releaseSpend = recordStep<{ holdId: string; keepMs: number }, void>(
	'release spend',
	([value], { holdId, keepMs }, nowMs) => {
		const record = spendFrom(value);
		if (!(holdId in record.holds)) return { writes: [undefined], answer: undefined };
		delete record.holds[holdId];
		return { writes: [{ value: record, expiresAtMs: nowMs + keepMs }], answer: undefined };
	},
	`local record = load(1)
if not record or not record.holds or record.holds[args.holdId] == nil then return nil end
record.holds[args.holdId] = nil
save(1, record, now + args.keepMs)
return nil`,
);

/** Notes what a job holds or was charged: its slice's spending moves by the change, and a price is learned. */
const settleSpend = recordStep<{ credits: number; sliceMs: number; keepMs: number; resolution?: string; creditsPerSecond?: number }, void>(
	'settle spend',
	([spendValue, spentValue], { credits, sliceMs, keepMs, resolution, creditsPerSecond }, nowMs) => {
		const record = spendFrom(spendValue);
		const job = spentValue as SpentRecord | undefined;
		const atMs = job?.atMs ?? nowMs;
		// A job's credits stay in the slice they were first put in, whatever the period since.
		const slice = job?.slice ?? String(Math.floor(atMs / sliceMs) * sliceMs);
		record.slices[slice] = (record.slices[slice] ?? 0) + credits - (job?.credits ?? 0);
		record.sliceMs = Math.max(record.sliceMs ?? 0, sliceMs);
		if (resolution !== undefined && creditsPerSecond !== undefined) record.creditsPerSecond[resolution] = creditsPerSecond;
		for (const start of Object.keys(record.slices)) if (Number(start) + record.sliceMs <= nowMs - keepMs) delete record.slices[start];
		return { writes: [{ value: record, expiresAtMs: nowMs + keepMs }, { value: { credits, atMs, slice }, expiresAtMs: atMs + keepMs }], answer: undefined };
	},
	`local record = load(1) or {}
local slices = record.slices or {}
local rates = record.creditsPerSecond or {}
local job = load(2)
local atMs = now
local before = 0
local slice = nil
if job then
	atMs = job.atMs
	before = job.credits
	slice = job.slice
end
if slice == nil then slice = string.format('%d', math.floor(atMs / args.sliceMs) * args.sliceMs) end
slices[slice] = (slices[slice] or 0) + args.credits - before
local widest = math.max(record.sliceMs or 0, args.sliceMs)
if args.resolution ~= nil and args.creditsPerSecond ~= nil then rates[args.resolution] = args.creditsPerSecond end
for start, _ in pairs(slices) do if tonumber(start) + widest <= now - args.keepMs then slices[start] = nil end end
save(1, { slices = slices, creditsPerSecond = rates, holds = record.holds or {}, sliceMs = widest }, now + args.keepMs)
save(2, { credits = args.credits, atMs = atMs, slice = slice }, atMs + args.keepMs)
return nil`,
);

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
 * process, cannot pass the cap together. A key's or member's jobs are counted whether a cap is set
 * or not, so that a cap set or lowered holds from that moment: at or over it, nothing is sent.
 * Each check and hold is one atomic step on the key's spend record, whose size does not grow with
 * the jobs made (spending is kept in slices of the period).
 */
export class SpendGuard {
	constructor(
		private readonly cap: SpendCap | undefined,
		private readonly store: StateStore,
		private readonly now: () => number,
	) {}

	/**
	 * Holds this create's expected price against the key's cap and, for a team member, against
	 * theirs, or throws SpendCapError; release() afterwards.
	 */
	async reserve(fingerprint: string, request: GenerateVideoRequest, member?: MemberSpending): Promise<{ release(): Promise<void> }> {
		const key = await this.hold(spendRecordName(fingerprint), this.cap, request, 'key');
		try {
			const own = await this.hold(spendRecordName(memberSpender(member)), member?.cap, request, 'member');
			return { release: async () => void (await Promise.all([key.release(), own.release()])) };
		} catch (error) {
			await key.release();
			throw error;
		}
	}

	/** Notes what the service says a job of this key holds or was charged (with no cap set too: one set later counts it). */
	async observe(fingerprint: string, job: JobRecord, request?: GenerateVideoRequest): Promise<void> {
		await this.settle(fingerprint, this.cap, job, request);
	}

	/** Counts a job a member made toward their cap, set or not yet: what it reserved when made. */
	async observeMade(member: MemberSpending | undefined, job: JobRecord, request: GenerateVideoRequest): Promise<void> {
		if (member) await this.settle(memberSpender(member), member.cap, job, request);
	}

	private async hold(name: string, cap: SpendCap | undefined, request: GenerateVideoRequest, whose: 'key' | 'member'): Promise<{ release(): Promise<void> }> {
		if (!cap) return { release: async () => undefined };
		const holdId = `${process.pid}:${this.now()}:${Math.random()}`;
		const slices = spendSlices(cap);
		const refused = await this.store.run(reserveSpend, [name], { holdId, resolution: request.resolution, duration: request.duration, cap, ...slices }, this.now());
		if (refused) throw new SpendCapError(refusal(cap, refused.spent, refused.held, refused.price ?? undefined, refused.inFlight, whose));
		return { release: () => this.store.run(releaseSpend, [name], { holdId, keepMs: slices.keepMs }, this.now()) };
	}

	private async settle(spender: string, cap: SpendCap | undefined, job: JobRecord, request?: GenerateVideoRequest): Promise<void> {
		const credits = job.status === 'failed' ? (job.creditsUsed ?? 0) : job.status === 'done' ? (job.creditsUsed ?? job.creditsQueued) : job.creditsQueued;
		if (credits === undefined) return;
		const learned = request && job.creditsQueued !== undefined && request.duration > 0 ? { resolution: request.resolution, creditsPerSecond: job.creditsQueued / request.duration } : {};
		await this.store.run(settleSpend, [spendRecordName(spender), spentRecordName(spender, job.id)], { credits, ...spendSlices(cap), ...learned }, this.now());
	}
}

/** A team member's own cap, beside the key's (see Accounts). */
export interface MemberSpending {
	name: string;
	cap?: SpendCap;
}

/** A member's spending is kept as a key's is, under a name no key fingerprint takes. */
const memberSpender = (member: MemberSpending | undefined) => `member.${member?.name ?? ''}`;

function refusal(cap: SpendCap, spent: number, held: number, price: number | undefined, inFlight: boolean, whose: 'key' | 'member'): string {
	const period = `${cap.periodHours} h`;
	const cost = price === undefined ? 'its price is not known yet (the service reports it once a job of this resolution is made)' : `it would cost about ${Math.round(price)} credits`;
	const busy = price === undefined && held === 0 && inFlight ? ' Another create is in flight; call again once it has answered.' : '';
	return (
		`Not created: ${whose === 'member' ? 'your own cap as a member of the team' : 'your spend cap'} is ${cap.credits} credits per ${period}, ${Math.round(spent)} are spent in the last ${period}` +
		`${held > 0 ? ` and ${Math.round(held)} are held by creates in flight` : ''}, and ${cost}.${busy} Nothing was sent or charged. ` +
		(whose === 'member'
			? "Tell the user to ask the team's admin to raise it (omni-video-mcp members cap), or try a shorter or lower-resolution video, or wait for the period to pass."
			: 'Ask the user whether to raise OMNI_VIDEO_SPEND_CAP_CREDITS, or try a shorter or lower-resolution video, or wait for the period to pass.')
	);
}
