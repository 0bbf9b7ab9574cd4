/* eslint-disable @n8n/community-nodes/no-restricted-globals -- the Activepieces piece: the engine hands its limits to the piece's process in its environment */
/**
 * What the Activepieces instance running this step allows, as its worker tells the engine process
 * (the worker's sandbox environment: AP_FLOW_TIMEOUT_SECONDS, AP_MAX_FILE_SIZE_MB). Read when
 * needed, not at load: a test or an engine may set them after the piece is loaded.
 */

/** Activepieces' default for AP_FLOW_TIMEOUT_SECONDS (its cloud and a self-hosted instance unless set). */
export const DEFAULT_FLOW_TIMEOUT_SECONDS = 600;
/** Activepieces' cloud's AP_MAX_FILE_SIZE_MB; a self-hosted instance sets its own (4 or 25 by release). */
export const DEFAULT_MAX_FILE_SIZE_MB = 10;

function positiveNumber(value: string | undefined, fallback: number): number {
	const number = Number(value);
	return value !== undefined && value.trim() !== '' && Number.isFinite(number) && number > 0 ? number : fallback;
}

/** How long the worker lets one run (one engine operation) go before it kills the process. */
export function flowTimeoutMs(): number {
	return positiveNumber(process.env.AP_FLOW_TIMEOUT_SECONDS, DEFAULT_FLOW_TIMEOUT_SECONDS) * 1000;
}

/** The largest file a step may write, in MB as the instance sets it (the server refuses larger ones). */
export function maxFileMb(): number {
	return positiveNumber(process.env.AP_MAX_FILE_SIZE_MB, DEFAULT_MAX_FILE_SIZE_MB);
}

export function maxFileBytes(): number {
	return Math.floor(maxFileMb() * 1024 * 1024);
}

/**
 * When this process first saw each run: the worker gives one run one engine process and one time
 * limit, so the run's clock started no later than that. Retry on Failure's attempts of a step
 * happen in the same process and count against the same limit.
 */
const firstSeen = new Map<string, number>();
const MAX_RUNS_REMEMBERED = 1_000;

export function runStartedAtMs(runId: string, nowMs: number): number {
	const seen = firstSeen.get(runId);
	if (seen !== undefined) return seen;
	if (firstSeen.size >= MAX_RUNS_REMEMBERED) firstSeen.delete(firstSeen.keys().next().value as string);
	firstSeen.set(runId, nowMs);
	return nowMs;
}
