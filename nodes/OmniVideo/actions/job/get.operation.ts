import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { forEachItem } from '../../../shared/forEachItem';
import { omniVideoClient } from '../../../shared/n8nHost';
import { jobItem, videoField, videoFieldProperty } from '../../../shared/jobOutput';

const properties: INodeProperties[] = [
	{
		displayName: 'Job ID',
		name: 'jobId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. job_abc123',
		description: 'The ID returned by Generate Video (field jobId)',
	},
	{
		displayName: 'Download Video',
		name: 'download',
		type: 'boolean',
		default: false,
		description: 'Whether to add the video file as binary data when the job is done',
		hint: 'For large videos, set N8N_DEFAULT_BINARY_DATA_MODE to filesystem (database or s3 in queue mode)',
	},
	videoFieldProperty,
];

export const description = updateDisplayOptions({ show: { resource: ['job'], operation: ['get'] } }, properties);

/** Looks a job up; a done job's video can be downloaded. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await forEachItem(this, lookUpItem);
}

async function lookUpItem(this: IExecuteFunctions, itemIndex: number): Promise<INodeExecutionData[]> {
	const { client } = await omniVideoClient(this);
	const job = await client.getJob(this.getNodeParameter('jobId', itemIndex) as string, { signal: this.getExecutionCancelSignal() });
	return [await jobItem(this, job, { field: videoField(this, itemIndex), itemIndex })];
}
