import { DEFAULT_FLOW_TIMEOUT_SECONDS, flowTimeoutMs, runStartedAtMs } from './runLimits';

/** Activepieces stops a run after 600 s of activity (its cloud, and self-hosted instances by default). */
export const RUN_CAP_MS = DEFAULT_FLOW_TIMEOUT_SECONDS * 1000;
/** Polling ends this long before the cap: room for the last look, the download and the steps after. */
const RUN_CAP_MARGIN_MS = 60_000;
export const MAX_POLL_MS = RUN_CAP_MS - RUN_CAP_MARGIN_MS;
/** However little of the run is left, one look at the job: the step then ends with its id. */
const MIN_POLL_MS = 1_000;

/**
 * How long polling may go on: as asked, never past what the run has left of the instance's flow
 * timeout (AP_FLOW_TIMEOUT_SECONDS, from the run's start as this process saw it) less the margin.
 * The worker kills a run at its timeout: polling ends first, with the job id to look up.
 */
export function pollTimeoutMs(seconds: unknown, runLeftMs: number = flowTimeoutMs()): number {
	const cap = Math.max(MIN_POLL_MS, runLeftMs - RUN_CAP_MARGIN_MS);
	const asked = Number(seconds) > 0 ? Number(seconds) * 1000 : cap;
	return Math.min(asked, cap);
}

/** What the run has left of the flow timeout: its start is when this process first saw the run. */
export function runLeftMs(runId: string): number {
	const now = Date.now();
	return flowTimeoutMs() - (now - runStartedAtMs(runId, now));
}

/** How long after its expected end a paused step looks its job up when no callback came. */
export function lookAfterMs(expectedMs: number): number {
	return Math.max(60_000, Math.round(expectedMs / 2));
}
