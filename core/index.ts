export * from './types';
export * from './transport';
export * from './errors';
export { expectedRenderSeconds } from './estimate';
export { validateGenerateInput, generationMode } from './validateGenerate';
export { isAcceptedCallbackUrl } from './validateUrls';
export { validateJobId } from './validateJobId';
export { validateUploadInput, validateStreamedUpload } from './validateUpload';
export { detectContentType } from './contentType';
export { parseJob } from './parseJob';
export { parseUploadTicket } from './parseUploadTicket';
export { parseErrorBody } from './parseErrorBody';
export { normaliseStatus } from './jobStatus';
export { parseTimestamp } from './timestamp';
export { errorFromResponse, errorFromTransportFailure, parseRetryAfter } from './httpErrors';
export type { Operation } from './httpErrors';
export { signWebhook, verifyWebhookSignature } from './signature';
export { RateLimiter, sharedLimiter, type JobSlot, type RequestPriority, type TurnOptions } from './limiter';
export { nextPollDelayMs } from './pollSchedule';
export { callApi, type ApiCall, type ApiRuntime } from './apiRequest';
export { generateVideo, type GenerateVideoOptions, type GeneratedJob } from './generateVideo';
export { getJob, jobPath, type GetJobOptions } from './getJob';
export { uploadImage, uploadStream, type UploadOptions, type UploadedFile } from './uploadImage';
export { sendPlain, MAX_PLAIN_REDIRECTS } from './plainRequest';
export { waitForJob, DEFAULT_WAIT_TIMEOUT_MS, type WaitForJobOptions } from './waitForJob';
export { handleCallback, CALLBACK_LOOKUP_BUDGET_MS, type CallbackOutcome, type CallbackRequest } from './callback';
export { DeliveryGuard, claimedOutcomeKey, type GuardedOutcome } from './deliveryGuard';
export { jobFailedError, isTerminal } from './jobOutcome';
export { BatchBook, BatchProgress, reconcileBatch } from './batchProgress';
export { newIdempotencyKey, derivedIdempotencyKey, keyFingerprint, canonicalJson } from './idempotency';
export { createOmniVideoClient, type OmniVideoClient, type OmniVideoClientConfig } from './client';
export {
	checkCredentials,
	planOfRateLimit,
	CREDENTIAL_CHECK_JOB_ID,
	type CredentialCheck,
	type CredentialProblem,
} from './credentialCheck';
export { redactSecrets, redactingTransport } from './redact';
export { jobView, type JobView } from './jobView';
export { planLimits, isLocalSandbox, normaliseBaseUrl, baseUrlProblem, type PlanSetting } from './plans';
