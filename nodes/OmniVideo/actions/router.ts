import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';
import * as video from './video';
import * as job from './job';
import * as image from './image';

type Operation = (this: IExecuteFunctions) => Promise<INodeExecutionData[][]>;

const RESOURCES: Record<string, Record<string, Operation>> = {
	video: { generate: video.generate.execute },
	job: { get: job.get.execute },
	image: { upload: image.upload.execute },
};

/** Hands the run to the chosen resource's operation; each operation decides how it runs its items. */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const run = RESOURCES[resource]?.[operation];
	if (!run) throw new NodeOperationError(this.getNode(), `The operation "${operation}" is not supported`);
	return await run.call(this);
}
