import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties, IWebhookFunctions } from 'n8n-workflow';
import { isToolExecution } from './n8nHost';
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

/** The Put Video in Field parameter videoField reads, shown once Download Video is on. */
export const videoFieldProperty: INodeProperties = {
	displayName: 'Put Video in Field',
	name: 'outputBinaryPropertyName',
	type: 'string',
	default: 'video',
	hint: 'The name of the output binary field for the video file',
	displayOptions: { show: { download: [true] } },
};

/**
 * Where the node is set to put the video (its Download Video and Put Video in Field parameters),
 * or undefined: not asked for, or an AI tool call, which returns JSON only.
 */
export function videoField(context: IExecuteFunctions | IWebhookFunctions, itemIndex = 0): string | undefined {
	if (isToolExecution(context)) return undefined;
	if (!(context.getNodeParameter('download', itemIndex, false) as boolean)) return undefined;
	return context.getNodeParameter('outputBinaryPropertyName', itemIndex, 'video') as string;
}

/** The job as an output item; a done job's video goes into `field` when one is given. */
export async function jobItem(
	context: IExecuteFunctions | IWebhookFunctions,
	job: JobRecord,
	options: { field?: string; itemIndex?: number; extra?: IDataObject },
): Promise<INodeExecutionData> {
	const item: INodeExecutionData = { json: jobJson(job, options.extra) };
	if (options.itemIndex !== undefined) item.pairedItem = { item: options.itemIndex };
	if (options.field && job.status === 'done') item.binary = { [options.field]: await downloadVideo(context, job) };
	return item;
}
