import type { JobRecord } from '../types';

const SAMPLE_JOB_ID = 'job_8f3a2c1d9e7b4a60';

/**
 * A finished job as the API reports it, for the platforms' samples (what a step's output looks
 * like before it has run): one record, so the samples change with the record's shape.
 */
export const SAMPLE_JOB: JobRecord = {
	id: SAMPLE_JOB_ID,
	status: 'done',
	rawStatus: 'done',
	progress: 100,
	resultUrls: [`https://cdn.omni-video.example/omni/acct_1/${SAMPLE_JOB_ID}/output.mp4`],
	creditsQueued: 16,
	creditsUsed: 16,
	createdAt: '2026-11-22T09:30:00.000Z',
	completedAt: '2026-11-22T09:31:02.000Z',
};
