import type { RequestRoom } from './sharedPlan';

/** The plan's request windows, and how long a request stays in the record: every store's steps follow these. */
export const PLAN_WINDOWS = { minuteMs: 60_000, hourMs: 3_600_000, keptMs: 2 * 3_600_000 } as const;

/** The plan's record as processes on one key keep it together: plain data, a record of its own. */
export interface PlanRecord {
	/** When each request in the last hour was sent, ascending, by every process. */
	sent: number[];
	/** The places among the plan's jobs at once, by place id: a create in flight, or the job it made. */
	places: Record<string, { jobId?: string; expectedDoneAtMs: number; expiresAtMs: number }>;
}

/**
 * The rules of each step on the plan's record, once: each changes the record it is given and
 * answers what SharedPlan's step answers. A store runs them as one atomic step (the MCP server's
 * records by name, and in Redis as a script of the same rules and windows).
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

function hasRoom(sent: readonly number[], atMs: number, room: RequestRoom): boolean {
	const inLast = (windowMs: number) => sent.filter((at) => at > atMs - windowMs - room.marginMs && at <= atMs).length;
	return inLast(PLAN_WINDOWS.minuteMs) < room.perMinute && inLast(PLAN_WINDOWS.hourMs) < room.perHour;
}

/** Requests older than two hours and lapsed places leave the record: it holds at most the plan's last hour. */
function prune(record: PlanRecord, nowMs: number): void {
	record.sent = record.sent.filter((at) => at > nowMs - PLAN_WINDOWS.keptMs).sort((a, b) => a - b);
	for (const [id, place] of Object.entries(record.places)) if (place.expiresAtMs <= nowMs) delete record.places[id];
}
