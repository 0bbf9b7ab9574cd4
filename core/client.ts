import type { ApiRuntime } from './http/apiRequest';
import type { ClientContext } from './http/transport';
import type { GenerateVideoInput, JobRecord, PlanLimits, StreamedUploadInput, UploadFileInput } from './types';
import { sharedLimiter } from './pacing/limiter';
import { sharedCalibration } from './pacing/renderCalibration';
import { sharedEndedJobs } from './pacing/endedJobs';
import { sharedMadeJobs } from './jobs/madeJobs';
import { createVideoOnce, generateVideo, type CreateOutcome, type GenerateVideoOptions, type GeneratedJob } from './jobs/generateVideo';
import { getJob, type GetJobOptions } from './jobs/getJob';
import { uploadFile, uploadStream, type UploadOptions, type UploadedFile } from './jobs/uploadFile';
import { waitForJob, type WaitForJobOptions } from './jobs/waitForJob';
import { handleCallback, type CallbackOutcome, type CallbackRequest } from './callbacks/callback';
import { checkCredentials, type CredentialCheck } from './jobs/credentialCheck';
import { redactingTransport } from './http/redact';
import { keyOnlyForApi } from './http/hostKit';
import type { SharedPlan } from './pacing/sharedPlan';

export interface OmniVideoClientConfig extends ClientContext {
	limits: PlanLimits;
	/** Names the API key without holding it (see keyFingerprint): keys sharing it share limits. */
	limiterKey: string;
	/** Strings (the API key) to mask in everything read from the network. */
	redact?: readonly string[];
	/** The plan's record shared with other processes on the key, and this process's name in it (see SharedPlan). */
	sharedPlan?: { plan: SharedPlan; holderId: string };
}

export interface OmniVideoClient {
	/** What the methods run on, for core's own tests; hosts use the methods. */
	readonly runtime: ApiRuntime;
	generateVideo(input: GenerateVideoInput, options?: GenerateVideoOptions): Promise<GeneratedJob>;
	/** The create's outcome (see CreateOutcome): for a host that handles each, the MCP server's calls. */
	createVideoOnce(input: GenerateVideoInput, options?: GenerateVideoOptions): Promise<CreateOutcome>;
	getJob(jobId: string, options?: GetJobOptions): Promise<JobRecord>;
	uploadFile(input: UploadFileInput, options?: UploadOptions): Promise<UploadedFile>;
	/** Uploads a file as it is read from its source (see uploadStream). */
	uploadStream(input: StreamedUploadInput, options?: UploadOptions): Promise<UploadedFile>;
	waitForJob(jobId: string, options?: WaitForJobOptions): Promise<JobRecord>;
	handleCallback(request: CallbackRequest): Promise<CallbackOutcome>;
	/** Places among the plan's jobs at once that a create would get now, without waiting (this process's view). */
	freeJobSlots(): number;
	/** Tells a working key from a bad one, at the cost of one request (docs/api.md#authentication). */
	testCredentials(options?: { deadlineAtMs?: number }): Promise<CredentialCheck>;
}

/** One client per key and base URL; the limiter behind it is shared process-wide for the key. */
export function createOmniVideoClient(config: OmniVideoClientConfig): OmniVideoClient {
	const baseUrl = config.baseUrl.replace(/\/+$/, '');
	const limiter = sharedLimiter(config.limiterKey, config.limits, config.clock, config.sleep);
	if (config.sharedPlan) limiter.share(config.sharedPlan.plan, config.sharedPlan.holderId);
	const runtime: ApiRuntime = {
		baseUrl,
		transport: keyOnlyForApi(redactingTransport(config.transport, config.redact ?? []), baseUrl),
		clock: config.clock,
		sleep: config.sleep,
		random: config.random,
		limiter,
		calibration: sharedCalibration(config.limiterKey),
		endedJobs: sharedEndedJobs(config.limiterKey),
		madeJobs: sharedMadeJobs(config.limiterKey),
	};
	return {
		runtime,
		generateVideo: (input, options) => generateVideo(runtime, input, options),
		createVideoOnce: (input, options) => createVideoOnce(runtime, input, options),
		getJob: (jobId, options) => getJob(runtime, jobId, options),
		uploadFile: (input, options) => uploadFile(runtime, input, options),
		uploadStream: (input, options) => uploadStream(runtime, input, options),
		waitForJob: (jobId, options) => waitForJob(runtime, jobId, options),
		handleCallback: (request) => handleCallback(runtime, request),
		freeJobSlots: () => runtime.limiter.freeJobSlots(),
		testCredentials: (options) => checkCredentials(runtime, options),
	};
}
