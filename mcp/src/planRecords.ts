import { PLAN_WINDOWS, planSteps, type PlanRecord, type RequestRoom, type SharedPlan } from '../../core';
import { list, recordStep } from './state/recordStep';
import type { StateStore } from './state/store';

/**
 * A key's plan record is kept this long after its last step: longer than its request windows (an
 * hour) and any place's hold.
 */
export const PLAN_KEEP_MS = 3 * 3_600_000;

/** A key's plan record: every process and replica on the key paces through it. */
export const planRecordName = (fingerprint: string): string => `plan:{${fingerprint}}`;
export const isPlanRecordName = (name: string): boolean => name.startsWith('plan:{');

/** The record as written by any store (Redis writes an empty list as {}). */
function planFrom(value: unknown): PlanRecord {
	const record = value as Partial<PlanRecord> | undefined;
	return { sent: list<number>(record?.sent), places: record?.places ?? {} };
}

/** Runs one of core's plan rules on the record as a RecordStep's JavaScript side. */
function planRun<A, R>(rule: (record: PlanRecord, args: A) => R) {
	return ([value]: unknown[], args: A, nowMs: number) => {
		const record = planFrom(value);
		const answer = rule(record, args);
		return { writes: [{ value: record, expiresAtMs: nowMs + PLAN_KEEP_MS }], answer };
	};
}

/** The same rules in Lua, for Redis: see core's planSteps. */
const LUA_PLAN = `
local record = load(1) or {}
local sent = {}
for _, at in ipairs(record.sent or {}) do sent[#sent + 1] = at end
local places = record.places or {}
local function prune(atMs)
	local kept = {}
	for _, at in ipairs(sent) do if at > atMs - ${PLAN_WINDOWS.keptMs} then kept[#kept + 1] = at end end
	table.sort(kept)
	sent = kept
	for id, place in pairs(places) do if place.expiresAtMs <= atMs then places[id] = nil end end
end
local function keep()
	save(1, { sent = sent, places = places }, now + ${PLAN_KEEP_MS})
end`;

export const claimRequest = recordStep<{ atMs: number; room: RequestRoom }, { granted: boolean; sentAtMs: number[] }>(
	'claim request',
	planRun((record, { atMs, room }) => planSteps.claimRequest(record, atMs, room)),
	`${LUA_PLAN}
prune(args.atMs)
local function inLast(windowMs)
	local count = 0
	for _, at in ipairs(sent) do if at > args.atMs - windowMs - args.room.marginMs and at <= args.atMs then count = count + 1 end end
	return count
end
local granted = inLast(${PLAN_WINDOWS.minuteMs}) < args.room.perMinute and inLast(${PLAN_WINDOWS.hourMs}) < args.room.perHour
if granted then sent[#sent + 1] = args.atMs end
keep()
return answer({ granted = granted, sentAtMs = sent })`,
);

export const claimPlace = recordStep<{ placeId: string; atMs: number; limit: number; lapseAtMs: number }, { granted: boolean; othersFreeAtMs: number[] }>(
	'take place',
	planRun((record, { placeId, atMs, limit, lapseAtMs }) => planSteps.claimPlace(record, placeId, atMs, limit, lapseAtMs)),
	`${LUA_PLAN}
prune(args.atMs)
local othersFreeAtMs = {}
for _, place in pairs(places) do othersFreeAtMs[#othersFreeAtMs + 1] = place.expectedDoneAtMs end
local granted = #othersFreeAtMs < args.limit
if granted then places[args.placeId] = { expectedDoneAtMs = args.lapseAtMs, expiresAtMs = args.lapseAtMs } end
keep()
return answer({ granted = granted, othersFreeAtMs = othersFreeAtMs })`,
);

export const bindPlace = recordStep<{ placeId: string; jobId: string; expectedDoneAtMs: number; holdUntilMs: number }, void>(
	'bind place',
	planRun((record, { placeId, jobId, expectedDoneAtMs, holdUntilMs }) => planSteps.bindPlace(record, placeId, jobId, expectedDoneAtMs, holdUntilMs)),
	`${LUA_PLAN}
if places[args.placeId] == nil then
	keep()
	return nil
end
local heldElsewhere = false
for id, place in pairs(places) do if id ~= args.placeId and place.jobId == args.jobId then heldElsewhere = true end end
if heldElsewhere then
	places[args.placeId] = nil
else
	places[args.placeId] = { jobId = args.jobId, expectedDoneAtMs = args.expectedDoneAtMs, expiresAtMs = args.holdUntilMs }
end
keep()
return nil`,
);

export const releasePlace = recordStep<{ placeId: string }, void>(
	'release place',
	planRun((record, { placeId }) => planSteps.releasePlace(record, placeId)),
	`${LUA_PLAN}
places[args.placeId] = nil
keep()
return nil`,
);

export const jobEnded = recordStep<{ jobId: string }, void>(
	'job ended',
	planRun((record, { jobId }) => planSteps.jobEnded(record, jobId)),
	`${LUA_PLAN}
for id, place in pairs(places) do if place.jobId == args.jobId then places[id] = nil end end
keep()
return nil`,
);

/** core's SharedPlan on the server's records: each of its steps one named step on the key's plan record. */
export function sharedPlanIn(store: StateStore, fingerprint: string, now: () => number = Date.now): SharedPlan {
	const names = [planRecordName(fingerprint)];
	return {
		claimRequest: async (atMs, room) => {
			const answer = await store.run(claimRequest, names, { atMs, room }, now());
			return { granted: answer.granted, sentAtMs: list<number>(answer.sentAtMs) };
		},
		claimPlace: async (placeId, atMs, limit, lapseAtMs) => {
			const answer = await store.run(claimPlace, names, { placeId, atMs, limit, lapseAtMs }, now());
			return { granted: answer.granted, othersFreeAtMs: list<number>(answer.othersFreeAtMs) };
		},
		bindPlace: (placeId, jobId, expectedDoneAtMs, holdUntilMs) => store.run(bindPlace, names, { placeId, jobId, expectedDoneAtMs, holdUntilMs }, now()),
		releasePlace: (placeId) => store.run(releasePlace, names, { placeId }, now()),
		jobEnded: (jobId) => store.run(jobEnded, names, { jobId }, now()),
	};
}
