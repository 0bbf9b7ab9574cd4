import { defineSearch, type Bundle, type ZObject } from 'zapier-platform-core';
import { NotFoundError, validateJobId } from '../../../core';
import { asZapierErrors } from '../errors';
import { omniVideoClient } from '../host';
import { deadlineIn } from '../connection';
import { JOB_OUTPUT_FIELDS, JOB_SAMPLE, jobOutput, type JobOutput } from '../job';

async function perform(z: ZObject, bundle: Bundle<{ jobId: string }>): Promise<JobOutput[]> {
	return asZapierErrors(z, async () => {
		const jobId = validateJobId(String(bundle.inputData.jobId ?? '').trim());
		const { client } = omniVideoClient(z, bundle);
		try {
			return [jobOutput(await client.getJob(jobId, { deadlineAtMs: deadlineIn() }))];
		} catch (error) {
			// A search that finds nothing is an empty result, which Zapier shows as "no job found".
			if (error instanceof NotFoundError) return [];
			throw error;
		}
	});
}

export default defineSearch({
	key: 'findJob',
	noun: 'Job',
	display: {
		label: 'Find Job',
		description: 'Finds a video job by its ID: its status, progress, credits and, once done, the video URL.',
	},
	operation: {
		perform,
		throttle: { window: 60, limit: 10, scope: ['auth' as const] },
		inputFields: [
			{
				key: 'jobId',
				label: 'Job ID',
				type: 'string' as const,
				required: true,
				helpText: 'The ID a Generate Video step returned, such as `job_8f3a2c1d9e7b4a60`.',
			},
		],
		outputFields: JOB_OUTPUT_FIELDS,
		sample: JOB_SAMPLE,
	},
});
