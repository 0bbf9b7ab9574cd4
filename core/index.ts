/*
 * What hosts (the n8n nodes, the Zapier app, the Activepieces piece) use of core, and nothing else: a name only core
 * uses stays in its module, and core's own tests import from the module they test.
 */

// The client, and what a host hands it.
export { createOmniVideoClient, type OmniVideoClient } from './client';
export type { HttpRequest, HttpResponse, Transport } from './transport';
export { StreamBody } from './transport';
export { MAX_PLAIN_REDIRECTS } from './plainRequest';
export { keyFingerprint, derivedIdempotencyKey, canonicalJson } from './idempotency';
export { planLimits } from './plans';
export { PLANS } from './types';
export { isLocalSandbox, normaliseBaseUrl, baseUrlProblem } from './baseUrl';

// The host kit: what every transport needs beside its own HTTP client.
export { mayCarryApiKey, transportFailureKind, lowerCaseHeaders, responseBody, abortableSleep } from './hostKit';
export type { Sleep } from './transport';

// Inputs and results.
export {
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	type GenerateVideoInput,
	type JobRecord,
	type PlanName,
} from './types';
export { validateGenerateInput, generationMode } from './validateGenerate';
export { GENERATE_LIMITS } from './inputLimits';
export { TYPICAL_RENDER_SECONDS } from './estimate';
export { validateJobId } from './validateJobId';
export { detectContentType } from './contentType';
export { isAcceptedCallbackUrl } from './validateUrls';
export type { GeneratedJob } from './generateVideo';
export type { UploadedFile } from './uploadFile';
export { jobView, type JobView } from './jobView';
export { SAMPLE_JOB } from './jobSample';
export { jobFailedError, isTerminal } from './jobOutcome';
export type { CredentialCheck, CredentialProblem } from './credentialCheck';

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
} from './errors';
// For a host that reads the CDN with its own client (the Activepieces piece's file output).
export { errorFromResponse, errorFromTransportFailure } from './httpErrors';

// Callbacks.
export type { CallbackRequest, CallbackOutcome } from './callback';
export { verifyWebhookSignature } from './signature';
export { DeliveryGuard, claimedOutcomeKey } from './deliveryGuard';
export { BatchBook, BatchProgress } from './batchProgress';
