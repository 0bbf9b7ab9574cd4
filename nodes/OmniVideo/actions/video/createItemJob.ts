import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import {
	validateGenerateInput,
	type GeneratedJob,
	type GenerateVideoInput,
	type OmniVideoClient,
} from '../../../../core';
import { isLocalSandbox, isToolExecution, omniVideoClient } from '../../../shared/n8nHost';
import { uploadFromBinary } from '../image/upload.operation';
import { itemJobKey } from './jobKey';

/** One item's job as created, with what the output item needs. */
export interface CreatedItemJob {
	created: GeneratedJob;
	client: OmniVideoClient;
	extra: IDataObject;
}

/** Reads the item's fields, uploads a binary source first, and creates its job once. */
export async function createItemJob(
	this: IExecuteFunctions,
	itemIndex: number,
	overrides: { callbackUrl?: string; watched?: boolean } = {},
): Promise<CreatedItemJob> {
	const { client, baseUrl } = await omniVideoClient(this);
	const source = this.getNodeParameter('source', itemIndex) as string;
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const input: GenerateVideoInput = {
		prompt: this.getNodeParameter('prompt', itemIndex) as string,
		resolution: this.getNodeParameter('resolution', itemIndex) as string,
		duration: this.getNodeParameter('duration', itemIndex) as number,
		callbackUrl: overrides.callbackUrl ?? ((options.callbackUrl as string) || undefined),
	};
	if (source === 'imageUrl') input.imageUrl = this.getNodeParameter('imageUrl', itemIndex) as string;
	if (source === 'videoUrl') input.videoUrl = this.getNodeParameter('videoUrl', itemIndex) as string;
	// Check everything but the upload before spending a request on it.
	if (source === 'binaryImage') {
		validateGenerateInput(
			{ ...input, imageUrl: 'https://upload.pending/image' },
			{ allowInsecureLoopbackCallback: isLocalSandbox(baseUrl) },
		);
		input.imageUrl = (await uploadFromBinary.call(this, client, itemIndex, this.getNodeParameter('binaryPropertyName', itemIndex) as string)).fileUrl;
	}
	// Same run (or a retry of it), same item, same input → same key: the job made before comes back.
	const reuseHours = Number(options.reuseHours) || 0;
	const idempotencyKey = itemJobKey(this, itemIndex, input, { reuseHours, resumeUrlAsCallback: overrides.callbackUrl !== undefined });
	const created = await client.generateVideo(input, {
		idempotencyKey,
		reuse: { retryFailed: options.retryFailedJobs === true, maxAgeMs: reuseHours > 0 ? reuseHours * 3_600_000 : undefined },
		signal: this.getExecutionCancelSignal(),
		allowInsecureLoopbackCallback: isLocalSandbox(baseUrl),
		expectedMs: (Number(options.expectedRenderSeconds) || 0) * 1000,
		// A polled job is seen ending here, so it keeps its place among the plan's jobs at once
		// until then; a job left to a callback may end unseen (n8n refuses callbacks until parked).
		watched: overrides.watched ?? (this.getNodeParameter('waitMode', 0) === 'poll' || isToolExecution(this)),
	});
	const extra: IDataObject = { mode: created.mode, idempotencyKey: created.idempotencyKey, submittedAt: new Date().toISOString() };
	// Said only when it happens: this item's job was made by an earlier run (and paid for then).
	if (created.replayed) extra.reused = true;
	if (created.replacedJobIds.length > 0) extra.madeAgainAfter = created.replacedJobIds;
	return { created, client, extra };
}
