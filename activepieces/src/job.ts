/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { Property, type FilesService } from '@activepieces/pieces-framework';
import { maxFileBytes, maxFileMb, DEFAULT_MAX_FILE_SIZE_MB } from './run/runLimits';
import { errorFromResponse, errorFromTransportFailure, jobView, TransportFailure, transportFailureKind, type JobRecord, type JobView } from '../../core';

/** A job as a step's output: core's view of it, plus what the step adds. */
export type JobOutput = JobView & Record<string, unknown>;

/**
 * The largest video the piece stores as a flow file: the instance's own limit (AP_MAX_FILE_SIZE_MB,
 * 10 MB on Activepieces' cloud, 4 or 25 MB by default on self-hosted releases), read from the
 * engine's environment. Larger videos stay links.
 */
const maxVideoFileBytes = maxFileBytes;

export const includeVideoFileProp = Property.Checkbox({
	displayName: 'Include Video File',
	description: `Also store the finished MP4 as a file of the run (up to your instance's file limit, ${DEFAULT_MAX_FILE_SIZE_MB} MB on Activepieces' cloud), for steps that take a file. A larger video stays a link (Video File Skipped says why); the Video URL is there either way.`,
	required: false,
	defaultValue: false,
});

/** Why a video stays a link: it is larger than a run's file may be. */
function tooLargeReason(job: JobRecord, size: number): string {
	const mb = size / (1024 * 1024);
	const shown = mb >= 0.1 ? `${mb.toFixed(1)} MB` : `${Math.ceil(size / 1024)} KB`;
	return `The video of Omni Video job ${job.id} is ${shown}, over the ${maxFileMb()} MB a run's file may hold on this instance (AP_MAX_FILE_SIZE_MB): use its Video URL.`;
}

/**
 * Downloads the video (without the key: the CDN is not the API) into a file of the run. A video
 * over the limit is not kept (read no further than the limit): the reason is returned instead.
 */
async function videoFile(files: FilesService, job: JobRecord): Promise<{ videoFile: string } | { videoFileSkipped: string }> {
	const url = job.resultUrls[0];
	let response: Response;
	try {
		response = await fetch(url, { redirect: 'follow' });
	} catch (error) {
		throw errorFromTransportFailure(new TransportFailure(transportFailureKind(error), String((error as Error)?.message ?? error)), { operation: 'download', jobId: job.id, nowMs: Date.now() });
	}
	if (!response.ok) throw errorFromResponse({ status: response.status, headers: {}, body: undefined }, { operation: 'download', jobId: job.id, nowMs: Date.now() });
	const declared = Number(response.headers.get('content-length'));
	const limit = maxVideoFileBytes();
	if (declared > limit) {
		await response.body?.cancel();
		return { videoFileSkipped: tooLargeReason(job, declared) };
	}
	const chunks: Uint8Array[] = [];
	let size = 0;
	for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
		size += chunk.byteLength;
		if (size > limit) {
			await response.body?.cancel().catch(() => undefined);
			return { videoFileSkipped: tooLargeReason(job, size) };
		}
		chunks.push(chunk);
	}
	return { videoFile: await files.write({ fileName: `omni-video-${job.id}.mp4`, data: Buffer.concat(chunks) }) };
}

/**
 * The job as output; a done job's video as a file of the run when asked for, or, when it is too
 * large for one, the reason it stays a link (videoFileSkipped).
 */
export async function jobOutput(job: JobRecord, options: { files?: FilesService; extra?: Record<string, unknown> } = {}): Promise<JobOutput> {
	const output: JobOutput = { ...jobView(job), ...options.extra };
	if (options.files && job.status === 'done' && job.resultUrls[0]) Object.assign(output, await videoFile(options.files, job));
	return output;
}
