import type { IBinaryData, IDataObject, IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';
import type { JobRecord } from '../../core';

/** A job as an item's JSON: the fields a workflow maps onward, under stable names. */
export function jobJson(job: JobRecord, extra: IDataObject = {}): IDataObject {
	const json: IDataObject = {
		jobId: job.id,
		status: job.status,
		videoUrl: job.resultUrls[0] ?? null,
		resultUrls: job.resultUrls,
	};
	const optional: Array<[string, unknown]> = [
		['rawStatus', job.rawStatus !== job.status ? job.rawStatus : undefined],
		['progress', job.progress],
		['creditsQueued', job.creditsQueued],
		['creditsUsed', job.creditsUsed],
		['createdAt', job.createdAt],
		['completedAt', job.completedAt],
		['error', job.error],
		['errorCode', job.errorCode],
	];
	for (const [key, value] of optional) if (value !== undefined) json[key] = value as IDataObject[string];
	return { ...json, ...extra };
}

/**
 * Downloads the video into binary data as a stream (never read whole into memory) with plain
 * httpRequest: the CDN gets no credentials.
 */
export async function downloadVideo(context: IExecuteFunctions | IWebhookFunctions, job: JobRecord): Promise<IBinaryData> {
	const url = job.resultUrls[0];
	const stream = (await context.helpers.httpRequest({ method: 'GET', url, encoding: 'stream', json: false })) as Parameters<
		IExecuteFunctions['helpers']['prepareBinaryData']
	>[0];
	return context.helpers.prepareBinaryData(stream, `omni-video-${job.id}.mp4`, 'video/mp4');
}
