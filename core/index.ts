/*
 * What hosts (the n8n nodes, the Zapier app, the Activepieces piece) use of core, and nothing else: a name only core
 * uses stays in its module, and core's own tests import from the module they test.
 */

// The client, and what a host hands it.
export { createOmniVideoClient, type OmniVideoClient } from './client';
export type { HttpRequest, HttpResponse, Transport } from './http/transport';
export { StreamBody } from './http/transport';
export { MAX_PLAIN_REDIRECTS } from './http/plainRequest';
export { keyFingerprint, derivedIdempotencyKey, canonicalJson } from './jobs/idempotency';
export { planLimits } from './pacing/plans';
export type { SharedPlan, RequestRoom } from './pacing/sharedPlan';
export { PLAN_WINDOWS, planSteps, type PlanRecord } from './pacing/planRecord';
export { PLANS } from './types';
export { isLocalSandbox, normaliseBaseUrl, baseUrlProblem } from './http/baseUrl';

// The host kit: what every transport needs beside its own HTTP client.
export { mayCarryApiKey, transportFailureKind, lowerCaseHeaders, responseBody, abortableSleep } from './http/hostKit';
export type { Sleep } from './http/transport';

// Inputs and results.
export {
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	type GenerateVideoInput,
	type JobRecord,
	type PlanName,
} from './types';
export { validateGenerateInput, generationMode } from './input/validateGenerate';
export { GENERATE_LIMITS } from './input/inputLimits';
export { TYPICAL_RENDER_SECONDS, expectedRenderSeconds, slotHoldMs } from './pacing/estimate';
export { validateJobId } from './input/validateJobId';
export { detectContentType } from './input/contentType';
export { callbackUrlProblem, isAcceptedCallbackUrl } from './input/validateUrls';
export type { CreateOutcome, GeneratedJob, GenerateVideoOptions } from './jobs/generateVideo';
export { CreateClaimedElsewhere, CreateOutcomeUnknownError, createMayHaveMadeJob, hostLedger, type HostJobRecords, type JobLedger, type LedgerEntry } from './jobs/jobLedger';
export type { UploadedFile } from './jobs/uploadFile';
export { jobView, type JobView } from './jobs/jobView';
export { SAMPLE_JOB } from './jobs/jobSample';
export { jobFailedError, isTerminal } from './jobs/jobOutcome';
export { callbackLateMs, MIN_LATE_MS } from './jobs/callbackLate';
export { parseJob } from './answers/parseJob';
export { jobSeenEnded } from './pacing/endedJobs';
export { forgetKey, keysHeld } from './pacing/perKey';
export { learnRenderTime } from './jobs/waitForJob';
export type { CredentialCheck, CredentialProblem } from './jobs/credentialCheck';

// Errors.
export {
	OmniVideoError,
	ValidationError,
	AuthError,
	CreditsError,
	RateLimitError,
	NotFoundError,
	TimeoutError,
	TransportError,
	TransportFailure,
	isOmniVideoError,
	unsaidDetails,
} from './errors/errors';
// For a host that reads the CDN with its own client (the Activepieces piece's file output).
export { errorFromResponse, errorFromTransportFailure } from './errors/httpErrors';

// Callbacks.
export type { CallbackRequest, CallbackOutcome } from './callbacks/callback';
export { verifyWebhookSignature, carriesSignature } from './callbacks/signature';
export { DeliveryGuard, claimedOutcomeKey } from './callbacks/deliveryGuard';
