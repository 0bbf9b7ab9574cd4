import type { IBinaryData, IDataObject, IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';
import { jobView, type JobRecord } from '../../core';

/** A job as an item's JSON: the fields a workflow maps onward, under stable names. */
export function jobJson(job: JobRecord, extra: IDataObject = {}): IDataObject {
	return { ...jobView(job), ...extra };
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
