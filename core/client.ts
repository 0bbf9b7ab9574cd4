import type { ApiRuntime } from './apiRequest';
import type { ClientContext, HttpResponse } from './transport';
import type { GenerateVideoInput, JobRecord, PlanLimits, UploadImageInput } from './types';
import { sharedLimiter } from './limiter';
import { sharedCalibration } from './renderCalibration';
import { generateVideo, type GenerateVideoOptions, type GeneratedJob } from './generateVideo';
import { getJob, jobPath, type GetJobOptions } from './getJob';
import { uploadImage, type UploadedFile, type UploadOptions } from './uploadImage';
import { waitForJob, type WaitForJobOptions } from './waitForJob';
import { handleCallback, type CallbackOutcome, type CallbackRequest } from './callback';
import { callApi } from './apiRequest';
import { AuthError, NotFoundError } from './errors';
import { redactingTransport } from './redact';

export interface OmniVideoClientConfig extends ClientContext {
	limits: PlanLimits;
	/** Names the API key without holding it (see keyFingerprint): keys sharing it share limits. */
	limiterKey: string;
	/** Strings (the API key) to mask in everything read from the network. */
	redact?: readonly string[];
}

export interface OmniVideoClient {
	readonly runtime: ApiRuntime;
	generateVideo(input: GenerateVideoInput, options?: GenerateVideoOptions): Promise<GeneratedJob>;
	getJob(jobId: string, options?: GetJobOptions): Promise<JobRecord>;
	uploadImage(input: UploadImageInput, options?: UploadOptions): Promise<UploadedFile>;
	waitForJob(jobId: string, options?: WaitForJobOptions): Promise<JobRecord>;
	handleCallback(request: CallbackRequest): Promise<CallbackOutcome>;
	/** Tells a working key from a bad one, at the cost of one request (see contract, "Keys"). */
	testCredentials(options?: { deadlineAtMs?: number }): Promise<{ ok: true } | { ok: false; message: string }>;
}

/** The job id the contract reserves for credential tests: valid keys get 404, bad keys 401. */
export const CREDENTIAL_CHECK_JOB_ID = 'job_credential_check';

/** One client per key and base URL; the limiter behind it is shared process-wide for the key. */
export function createOmniVideoClient(config: OmniVideoClientConfig): OmniVideoClient {
	const runtime: ApiRuntime = {
		baseUrl: config.baseUrl.replace(/\/+$/, ''),
		transport: redactingTransport(config.transport, config.redact ?? []),
		clock: config.clock,
		sleep: config.sleep,
		random: config.random,
		limiter: sharedLimiter(config.limiterKey, config.limits, config.clock, config.sleep),
		calibration: sharedCalibration(config.limiterKey),
	};
	return {
		runtime,
		generateVideo: (input, options) => generateVideo(runtime, input, options),
		getJob: (jobId, options) => getJob(runtime, jobId, options),
		uploadImage: (input, options) => uploadImage(runtime, input, options),
		waitForJob: (jobId, options) => waitForJob(runtime, jobId, options),
		handleCallback: (request) => handleCallback(runtime, request),
		testCredentials: (options) => testCredentials(runtime, options),
	};
}

async function testCredentials(
	runtime: ApiRuntime,
	options: { deadlineAtMs?: number } = {},
): Promise<{ ok: true } | { ok: false; message: string }> {
	let response: HttpResponse;
	try {
		response = await callApi(runtime, {
			operation: 'credentialTest',
			method: 'GET',
			path: jobPath(CREDENTIAL_CHECK_JOB_ID),
			retryBudgetMs: 30_000,
			deadlineAtMs: options.deadlineAtMs,
		});
	} catch (error) {
		if (error instanceof NotFoundError) return { ok: true };
		if (error instanceof AuthError) return { ok: false, message: error.message };
		return { ok: false, message: error instanceof Error ? error.message : String(error) };
	}
	// A real job by that name would also prove the key works.
	return response.status < 300 ? { ok: true } : { ok: false, message: `Unexpected status ${response.status}` };
}
