/** A job is overdue once it is this share of its render time past its expected end: its callback is then looked for by a lookup. */
const LATE_SHARE = 0.5;
/** Looked up at least this late (ms). */
export const MIN_LATE_MS = 1_000;

/**
 * How long past a job's expected end its callback is still waited for before the job is looked up
 * (and, past twice this, taken as lost): half its render time, at least a second. Every host that
 * hears callbacks (n8n's Wait for Callback, the MCP server over HTTP) uses the same margin.
 */
export function callbackLateMs(renderMs: number): number {
	return Math.max(MIN_LATE_MS, LATE_SHARE * renderMs);
}
