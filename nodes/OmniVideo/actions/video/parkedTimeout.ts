import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

/** The spec's longest render (30–90 s): a job of the batch is not awaited past this, at least. */
const LONGEST_RENDER_MS = 90_000;
/** Slack after the batch's expected end, for a late render or a queue at the service. */
const GRACE_MS = 5 * 60_000;

/**
 * When a parked batch stops waiting: once every job should have ended and GRACE_MS more, or at
 * Limit Wait Time if that comes first. Callbacks may be lost (the spec names no retry; none comes
 * for a failed job on its strictest reading), and nothing else wakes a parked execution. Rows
 * run in rounds of `madeNow` jobs at once, each round expected to take the longer of the spec's
 * longest render and 1.5 times the jobs' expected render time.
 */
export function batchWaitTill(nowMs: number, options: { rows: number; madeNow: number; expectedMs: number; limitMinutes: number }): Date {
	const rounds = Math.ceil(options.rows / Math.max(1, options.madeNow));
	const roundMs = Math.max(LONGEST_RENDER_MS, 1.5 * options.expectedMs);
	const boundMs = rounds * roundMs + GRACE_MS;
	return new Date(nowMs + Math.min(boundMs, options.limitMinutes * 60_000));
}

/** What a row knows at the park: its job, or that its job is made later (after a callback). */
export type ParkedRow = { jobId: string } | { later: true } | { notMade: true };

/**
 * When the wait time passes, n8n does not run the node again: it disables it and passes its
 * input items on (docs/n8n-internals.md). So the items n8n would pass on are replaced now, in the
 * waiting execution's own stack entry, by copies that say what became of each row: its job id,
 * that the outcome is unknown and how to read it. The user's fields stay as they were (webhook()
 * reads rows' parameters from these items); only `omniVideo` is added. The upstream node's
 * output is another array and keeps its items untouched.
 */
export function nameJobsIfTimeUp(context: IExecuteFunctions, rows: ParkedRow[], limitAt: Date): void {
	const stackEntry = context.getExecuteData();
	const input = stackEntry.data.main[0];
	if (!input) return;
	const at = limitAt.toISOString();
	stackEntry.data.main[0] = input.map((item, index): INodeExecutionData => {
		const row = rows[index];
		return { ...item, json: { ...item.json, omniVideo: row ? timeUpNote(row, index, at) : undefined } };
	});
}

function timeUpNote(row: ParkedRow, index: number, at: string): Record<string, string> {
	if ('jobId' in row) {
		return {
			status: 'unknown',
			jobId: row.jobId,
			error: `Omni Video had not called back for job ${row.jobId} when this node stopped waiting (${at}), so whether it is done, failed or still rendering is unknown here`,
			hint: `Read it with the Omni Video node's Get Job operation (Job ID ${row.jobId})`,
		};
	}
	if ('notMade' in row) {
		return { status: 'failed', error: 'This item\'s job was not created, so there is no video', hint: 'See the node\'s output for why' };
	}
	return {
		status: 'unknown',
		error: `This item's job was to be made once an earlier job of the batch ended; by ${at} no callback had said whether it was, so its job id is unknown here`,
		hint: `Look in your Omni Video dashboard for a job whose callback URL ends in omniVideoRow=${index}, and read it with Get Job; if there is none, run this item again`,
	};
}
