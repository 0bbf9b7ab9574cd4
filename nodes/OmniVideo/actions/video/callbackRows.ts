import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { jobItem, jobJson, videoField } from '../../../shared/jobOutput';
import { errorJson } from '../../../shared/nodeErrors';
import { type BatchRow, type ParkedBatch } from './callbackBatch';
import { callbackUrlOf } from './resumeUrl';

/** How the error of an item whose create was held (createHold.ts) begins: what a pipeline's report tells such rows by. */
export const HELD_CREATE_ERROR = 'Another step of this execution';

/** The row as shown while the execution waits (n8n drops it on resume). */
function parkedJson(row: BatchRow, index: number, resumeUrl: string): INodeExecutionData {
	const callbackUrl = callbackUrlOf(resumeUrl, index);
	const json = row.error
		? row.error
		: row.job
			? { jobId: row.job, status: row.ended?.status ?? 'queued', callbackUrl }
			: { status: row.doubt !== undefined ? 'unknown' : 'waitingForPlace', callbackUrl };
	return { json, pairedItem: { item: index } };
}

export function parkedItems(batch: ParkedBatch, resumeUrl: string): INodeExecutionData[] {
	return batch.rows.map((row, index) => parkedJson(row, index, resumeUrl));
}

/** A row without an ended job when the batch ends: what is known, and what to do. */
function unendedJson(row: BatchRow, index: number, limitAt: number): INodeExecutionData['json'] {
	const at = new Date(limitAt).toISOString();
	if (row.job !== undefined) {
		return {
			jobId: row.job,
			status: 'running',
			error: `Job ${row.job} was still rendering when this node stopped waiting (Limit Wait Time, ${at})`,
			hint: `Read it later with the Omni Video node's Get Job operation (Job ID ${row.job})`,
		};
	}
	if (row.doubt !== undefined) {
		const sent = new Date(row.doubt).toISOString();
		const what = row.elsewhere
			? `${HELD_CREATE_ERROR}, on another n8n process, may have sent this item's create before ${sent}, and n8n lost its record of it`
			: `This item's create was sent at ${sent} and its answer was lost`;
		return {
			status: 'unknown',
			error: `${what}, so whether a job was made is unknown; it was not sent again, so as not to pay twice`,
			hint: `Look in your Omni Video dashboard for a job created around ${sent} whose callback URL ends in row=${index}, and read it with Get Job; if there is none, run this item again`,
		};
	}
	return {
		status: 'failed',
		error: `This item's job was not made: no place among the plan's jobs came free before Limit Wait Time (${at})`,
		hint: 'Raise Limit Wait Time, or run this item again',
	};
}

/**
 * A job found ended by the batch's own look-up, its callback never heard: lost on the way, or
 * refused by n8n (a resume URL the service could not use, a proxy in between). Said on the item,
 * so that a batch that always ends this way (later than it could) is noticed.
 */
function uncalledNote(jobId: string): string {
	return `No callback of job ${jobId} reached this execution: it was found by look-up after its expected end. If no job's callback arrives, check that Omni Video can reach n8n's webhook URL (N8N_WEBHOOK_URL) and that nothing in between changes the resume URL`;
}

/** One item per row, once the batch ends: the job as it ended, why it has none, or what is unknown. */
export async function batchItems(context: IExecuteFunctions, batch: ParkedBatch, resumeUrl: string): Promise<INodeExecutionData[]> {
	const field = videoField(context);
	return await Promise.all(
		batch.rows.map(async (row, index): Promise<INodeExecutionData> => {
			if (row.ended) {
				try {
					const extra = { callbackUrl: callbackUrlOf(resumeUrl, index), ...(row.uncalled ? { callbackNote: uncalledNote(row.ended.id) } : {}) };
					return await jobItem(context, row.ended, { field, itemIndex: index, extra });
				} catch (error) {
					return { json: { ...jobJson(row.ended), ...errorJson(error) }, pairedItem: { item: index } };
				}
			}
			if (row.error) return { json: row.error, pairedItem: { item: index } };
			return { json: unendedJson(row, index, batch.limitAt), pairedItem: { item: index } };
		}),
	);
}
