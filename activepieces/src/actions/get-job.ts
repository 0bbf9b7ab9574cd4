/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { createAction, Property } from '@activepieces/pieces-framework';
import { validateJobId } from '../../../core';
import { omniVideoAuth } from '../auth';
import { connectionOf, inStepTerms, omniVideoClient } from '../host';
import { includeVideoFileProp, jobOutput } from '../job';

export const getJob = createAction({
	auth: omniVideoAuth,
	name: 'get_job',
	displayName: 'Get Job',
	description: 'Looks up an Omni Video job by its ID: its status, and the video once it is done.',
	props: {
		jobId: Property.ShortText({ displayName: 'Job ID', description: 'The Job ID from Generate Video, e.g. job_8f3a2c1d9e7b4a60.', required: true }),
		includeVideoFile: includeVideoFileProp,
	},
	async run(ctx) {
		return inStepTerms(async () => {
			const jobId = validateJobId(ctx.propsValue.jobId);
			const { client } = omniVideoClient(connectionOf(ctx.auth));
			const job = await client.getJob(jobId);
			return jobOutput(job, { files: ctx.propsValue.includeVideoFile ? ctx.files : undefined });
		});
	},
});
