import type { JobRecord } from '../types';

/** A job as both platforms show it to users: flat, URLs always present, empty fields left out. */
const OPTIONAL = ['progress', 'creditsQueued', 'creditsUsed', 'createdAt', 'completedAt', 'error', 'errorCode'] as const;

export type JobView = {
	jobId: string;
	status: JobRecord['status'];
	/** The first result, the one most steps want; null until the job is done. */
	videoUrl: string | null;
	resultUrls: string[];
	rawStatus?: string;
} & Pick<JobRecord, (typeof OPTIONAL)[number]>;

export function jobView(job: JobRecord): JobView {
	const view: JobView = {
		jobId: job.id,
		status: job.status,
		videoUrl: job.resultUrls[0] ?? null,
		resultUrls: job.resultUrls,
	};
	// The service's own spelling only when it differs from the normalised status.
	if (job.rawStatus !== job.status) view.rawStatus = job.rawStatus;
	for (const key of OPTIONAL) if (job[key] !== undefined) Object.assign(view, { [key]: job[key] });
	return view;
}
