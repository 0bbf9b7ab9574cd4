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
 * The rules of each step on the plan's record, once: each changes the record it is given and
 * answers what SharedPlan's step answers. A store runs them as one atomic step (sharedPlanOver for
 * a store that can run any change atomically; the MCP server's records run them by name, and in
 * Redis as a script of the same rules).
 */
export const planSteps = {
	claimRequest(record: PlanRecord, atMs: number, room: RequestRoom): { granted: boolean; sentAtMs: number[] } {
		prune(record, atMs);
		const granted = hasRoom(record.sent, atMs, room);
		if (granted) record.sent.push(atMs);
		return { granted, sentAtMs: [...record.sent] };
	},
	claimPlace(record: PlanRecord, placeId: string, atMs: number, limit: number, lapseAtMs: number): { granted: boolean; othersFreeAtMs: number[] } {
		prune(record, atMs);
		const held = Object.values(record.places);
		const granted = held.length < limit;
		if (granted) record.places[placeId] = { expectedDoneAtMs: lapseAtMs, expiresAtMs: lapseAtMs };
		return { granted, othersFreeAtMs: held.map((place) => place.expectedDoneAtMs) };
	},
	bindPlace(record: PlanRecord, placeId: string, jobId: string, expectedDoneAtMs: number, holdUntilMs: number): void {
		const place = record.places[placeId];
		if (!place) return;
		// A job that holds a place already (a replayed create, another process's) keeps that one.
		if (Object.entries(record.places).some(([id, other]) => id !== placeId && other.jobId === jobId)) delete record.places[placeId];
		else record.places[placeId] = { jobId, expectedDoneAtMs, expiresAtMs: holdUntilMs };
	},
	releasePlace(record: PlanRecord, placeId: string): void {
		delete record.places[placeId];
	},
	jobEnded(record: PlanRecord, jobId: string): void {
		for (const [id, place] of Object.entries(record.places)) if (place.jobId === jobId) delete record.places[id];
	},
};

/** The SharedPlan of any store that can run a PlanTransaction (a file under a lock, say): the rules are planSteps'. */
export function sharedPlanOver(transact: PlanTransaction): SharedPlan {
	return {
		claimRequest: (atMs, room) => transact((record) => planSteps.claimRequest(record, atMs, room)),
		claimPlace: (placeId, atMs, limit, lapseAtMs) => transact((record) => planSteps.claimPlace(record, placeId, atMs, limit, lapseAtMs)),
		bindPlace: (placeId, jobId, expectedDoneAtMs, holdUntilMs) => transact((record) => planSteps.bindPlace(record, placeId, jobId, expectedDoneAtMs, holdUntilMs)),
		releasePlace: (placeId) => transact((record) => planSteps.releasePlace(record, placeId)),
		jobEnded: (jobId) => transact((record) => planSteps.jobEnded(record, jobId)),
	};
}

function hasRoom(sent: readonly number[], atMs: number, room: RequestRoom): boolean {
	const inLast = (windowMs: number) => sent.filter((at) => at > atMs - windowMs - room.marginMs && at <= atMs).length;
	return inLast(MINUTE_MS) < room.perMinute && inLast(HOUR_MS) < room.perHour;
}

/** Requests older than two hours and lapsed places leave the record: it holds at most the plan's last hour. */
function prune(record: PlanRecord, nowMs: number): void {
	record.sent = record.sent.filter((at) => at > nowMs - 2 * HOUR_MS).sort((a, b) => a - b);
	for (const [id, place] of Object.entries(record.places)) if (place.expiresAtMs <= nowMs) delete record.places[id];
}
