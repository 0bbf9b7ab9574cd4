import type { RequestRoom, SharedPlan } from './sharedPlan';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** The plan's record as processes on one key keep it together: plain data, stored whole. */
export interface PlanRecord {
	/** When each request in the last hour was sent, ascending, by every process. */
	sent: number[];
	/** The places among the plan's jobs at once, by place id: a create in flight, or the job it made. */
	places: Record<string, { jobId?: string; expectedDoneAtMs: number; expiresAtMs: number }>;
}

/**
 * One atomic step on the record: the store reads it (or an empty one), runs `change` on it, writes
 * it back and answers what `change` returned, with no other process's step in between.
 */
export type PlanTransaction = <R>(change: (record: PlanRecord) => R) => Promise<R>;

export function emptyPlanRecord(): PlanRecord {
	return { sent: [], places: {} };
}

/**
 * The SharedPlan of any store that can run a PlanTransaction (a file under a lock, a Redis key
 * under WATCH): the rules are here, once; the store only makes each step atomic.
 */
export function sharedPlanOver(transact: PlanTransaction): SharedPlan {
	return {
		claimRequest: (atMs, room) =>
			transact((record) => {
				prune(record, atMs);
				const granted = hasRoom(record.sent, atMs, room);
				if (granted) record.sent.push(atMs);
				return { granted, sentAtMs: [...record.sent] };
			}),
		claimPlace: (placeId, atMs, limit, lapseAtMs) =>
			transact((record) => {
				prune(record, atMs);
				const held = Object.values(record.places);
				const granted = held.length < limit;
				if (granted) record.places[placeId] = { expectedDoneAtMs: lapseAtMs, expiresAtMs: lapseAtMs };
				return { granted, othersFreeAtMs: held.map((place) => place.expectedDoneAtMs) };
			}),
		bindPlace: (placeId, jobId, expectedDoneAtMs, holdUntilMs) =>
			transact((record) => {
				const place = record.places[placeId];
				if (!place) return;
				// A job that holds a place already (a replayed create, another process's) keeps that one.
				if (Object.entries(record.places).some(([id, other]) => id !== placeId && other.jobId === jobId)) delete record.places[placeId];
				else record.places[placeId] = { jobId, expectedDoneAtMs, expiresAtMs: holdUntilMs };
			}),
		releasePlace: (placeId) =>
			transact((record) => {
				delete record.places[placeId];
			}),
		jobEnded: (jobId) =>
			transact((record) => {
				for (const [id, place] of Object.entries(record.places)) if (place.jobId === jobId) delete record.places[id];
			}),
	};
}

function hasRoom(sent: readonly number[], atMs: number, room: RequestRoom): boolean {
	const inLast = (windowMs: number) => sent.filter((at) => at > atMs - windowMs - room.marginMs && at <= atMs).length;
	return inLast(MINUTE_MS) < room.perMinute && inLast(HOUR_MS) < room.perHour;
}

function prune(record: PlanRecord, nowMs: number): void {
	record.sent = record.sent.filter((at) => at > nowMs - 2 * HOUR_MS).sort((a, b) => a - b);
	for (const [id, place] of Object.entries(record.places)) if (place.expiresAtMs <= nowMs) delete record.places[id];
}
