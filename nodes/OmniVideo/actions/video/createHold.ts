import type { IExecuteFunctions } from 'n8n-workflow';
import { hasBatchNotes } from '../../../shared/batchJobLedger';
import { waitsForPlace, type ParkedBatch } from './callbackBatch';

/**
 * How long a hold waits for a step that reads the batch's notes (the client's clock): a job made
 * just before the hold ends within the spec's 90 s, and its callback, which comes to a step that
 * reads them, within the service's retries. Past it, the notes are taken as lost.
 */
export const HOLD_MS = 5 * 60_000;

/**
 * Whether this step runs on data n8n stored while another step of the batch ran: it found a
 * callback recorded, and the batch's notes are not in the static data it reads. Only a resume
 * records a callback, and every step clears them before it parks; a resume reads the workflow's
 * static data, where the notes are. A wake by wait time on a queue-mode worker reads the
 * execution's own copy instead, which has none: so such a wake read the execution while the
 * step a resume started ran, and went ahead once that step had parked (n8n 2.8.4's wait tracker
 * checks neither the status nor the wait time when it reads the execution, and its resume guard
 * asks the status only). Seen twice in 500-item batches on the strictest reading, each time one
 * create sent again. Never in a manual run (no static data saved: no notes to miss).
 */
function isStaleWake(context: IExecuteFunctions, batch: ParkedBatch, notes: boolean): boolean {
	if (notes || batch.heard.length === 0 || context.getMode() === 'manual') return false;
	return batch.rows.some((row) => row.job !== undefined || row.doubt !== undefined);
}

/**
 * Before a step merges its callbacks: holds every create when the step is a stale wake, since the
 * step that ran before it may have made the rows still unmade here, with notes this step cannot
 * read. That step made them in order, and no more than the plan runs at once: those rows are held,
 * and a callback naming one binds its job. The hold ends at the first step that reads the notes
 * (releaseHold). When none comes within HOLD_MS (the notes lost: evicted, or overwritten by another
 * execution's older copy), each held row still without a job is in doubt: never sent, so as not to
 * pay twice, and its item says what to check.
 */
export function holdIfStale(context: IExecuteFunctions, batch: ParkedBatch, nowMs: number, concurrentJobs: number): void {
	const hold = batch.hold;
	if (hold === undefined) {
		if (!isStaleWake(context, batch, hasBatchNotes(context))) return;
		const waiting = batch.rows.flatMap((row, index) => (waitsForPlace(row) ? [index] : []));
		batch.hold = { rows: waiting.slice(0, concurrentJobs), at: nowMs };
	} else if (nowMs >= hold.at + HOLD_MS && !hasBatchNotes(context)) {
		for (const index of hold.rows) {
			const row = batch.rows[index];
			if (waitsForPlace(row)) Object.assign(row, { doubt: hold.at, elsewhere: true, plan: undefined });
		}
		batch.hold = undefined;
	}
}

/**
 * Once the step's callbacks are merged (those naming held rows bound): a step that reads the notes
 * ends the hold, since its creates find there the jobs the earlier step made.
 */
export function releaseHold(context: IExecuteFunctions, batch: ParkedBatch): void {
	if (batch.hold !== undefined && hasBatchNotes(context)) batch.hold = undefined;
}

/** Whether a callback naming this row binds its job to it: its create is in doubt, or held. */
export function awaitsUnseenJob(batch: ParkedBatch, index: number | undefined): boolean {
	const row = index === undefined ? undefined : batch.rows[index];
	if (row === undefined || row.job !== undefined) return false;
	return row.doubt !== undefined || (batch.hold?.rows.includes(index!) ?? false);
}
