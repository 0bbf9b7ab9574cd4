import type { HttpResponse } from './transport';
import {
	AuthError,
	CreditsError,
	NotFoundError,
	RateLimitError,
	ServiceError,
	TransportError,
	ValidationError,
	type ErrorDetails,
	type FieldProblem,
	type OmniVideoError,
	type TransportFailure,
} from './errors';
import { parseErrorBody } from './parse';

/** Which call failed: it decides what the message tells the user to do. */
export type Operation = 'generate' | 'getJob' | 'upload' | 'uploadPut' | 'download' | 'credentialTest';

export interface ErrorContext {
	operation: Operation;
	nowMs: number;
	jobId?: string;
	idempotencyKey?: string;
}

/** Retry-After in seconds or as an HTTP date, as milliseconds from now (never negative). */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
	if (value === undefined || value.trim() === '') return undefined;
	const trimmed = value.trim();
	if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
	const date = Date.parse(trimmed);
	return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** The input field each 400 code is about. */
const FIELD_OF_CODE: Record<string, string> = {
	prompt_too_long: 'prompt',
	invalid_resolution: 'resolution',
	invalid_duration: 'duration',
	invalid_model: 'model',
	conflicting_inputs: 'videoUrl',
	invalid_callback_url: 'callbackUrl',
	file_too_large: 'data',
};

function whichRequest(context: ErrorContext): string {
	switch (context.operation) {
		case 'generate':
			return 'create the video job';
		case 'getJob':
			return context.jobId ? `look up job ${context.jobId}` : 'look up the job';
		case 'upload':
			return 'prepare the upload';
		case 'uploadPut':
			return 'upload the file';
		case 'download':
			return 'download the video';
		case 'credentialTest':
			return 'check the credentials';
	}
}

/** For a create that may have happened: how to avoid paying twice. */
function unknownOutcomeAdvice(context: ErrorContext): string {
	if (context.operation !== 'generate') return '';
	const key = context.idempotencyKey ? ` Rerunning with the same idempotency key ${context.idempotencyKey} is safe where the service honours it.` : '';
	return ` The job may or may not have been created: check your Omni Video dashboard before running again.${key}`;
}

function reference(status: number, code: string | undefined, requestId: string | undefined): string {
	const parts = [String(status), code].filter(Boolean).join(' ');
	return requestId ? `(${parts}, request ${requestId})` : `(${parts})`;
}

/** The right error of the family for a non-2xx answer, with a message that says what to do. */
export function errorFromResponse(response: HttpResponse, context: ErrorContext): OmniVideoError {
	const { status } = response;
	const parsed = parseErrorBody(response.body);
	const requestId = parsed.requestId ?? response.headers['x-request-id'];
	const code = parsed.code;
	const details: ErrorDetails = {
		status,
		code,
		requestId,
		jobId: context.jobId,
		idempotencyKey: context.idempotencyKey,
	};
	const ref = reference(status, code, requestId);
	const said = parsed.message ? `: ${parsed.message.replace(/\.?$/, '')}` : '';
	const action = whichRequest(context);

	if (context.operation === 'uploadPut' && status >= 400 && status < 500 && status !== 413 && status !== 429) {
		return new ValidationError(
			`The storage service refused the uploaded file ${ref}${said}. The upload link may have expired: run Upload Image again.`,
			[],
			details,
		);
	}
	if (status === 400 || status === 413 || status === 422) {
		const field = (code && FIELD_OF_CODE[code]) ?? (status === 413 ? 'data' : undefined);
		const problems: FieldProblem[] = field ? [{ field, value: undefined, message: parsed.message ?? code ?? 'invalid' }] : [];
		let advice = 'Correct the input and run again.';
		if (status === 413) advice = 'Use a smaller file.';
		if (code === 'idempotency_key_reused') {
			advice = `The idempotency key ${context.idempotencyKey ?? ''} was already used for a different request: use a new key for new input.`;
		}
		return new ValidationError(`The Omni Video API refused to ${action} ${ref}${said}. ${advice}`, problems, details);
	}
	if (status === 401) {
		return new AuthError(
			`The Omni Video API refused the API key ${ref}. Check the key in the credential: it may be mistyped or revoked in the dashboard.`,
			details,
		);
	}
	if (status === 403) {
		return new AuthError(
			`This API key may not use the API ${ref}${said}. API access needs the Pro or Premium plan.`,
			details,
		);
	}
	if (status === 402) {
		const advice =
			code === 'key_budget_exceeded'
				? "This key's credit budget cannot cover the job: raise the key's budget in the dashboard or use another key."
				: 'The account has too few credits for the job: top up credits in the dashboard.';
		return new CreditsError(`Not enough credits to ${action} ${ref}. ${advice}`, details);
	}
	if (status === 404) {
		const what = context.jobId ? `No job ${context.jobId} was found` : 'Nothing was found';
		return new NotFoundError(
			`${what} for this API key's account ${ref}. Check the job id; jobs of other accounts are not visible.`,
			details,
		);
	}
	if (status === 429) {
		const retryAfterMs = parseRetryAfter(response.headers['retry-after'], context.nowMs);
		const wait = retryAfterMs !== undefined ? ` Wait ${Math.ceil(retryAfterMs / 1000)} s and try again.` : ' Wait a little and try again.';
		const why =
			code === 'concurrency_limited'
				? 'The plan allows no more jobs at once'
				: "The plan's request limit is reached";
		return new RateLimitError(`${why} ${ref}.${wait} Other workflows using the same key count too.`, {
			...details,
			retryAfterMs,
		});
	}
	if (status === 409) {
		return new ServiceError(
			`The same request is still being processed ${ref}. Wait a moment and run again with the same idempotency key.`,
			details,
		);
	}
	const serviceSide = status >= 500 ? 'The Omni Video service failed' : 'The Omni Video API answered unexpectedly';
	return new ServiceError(`${serviceSide} while trying to ${action} ${ref}${said}.${unknownOutcomeAdvice(context)}${status >= 500 && context.operation !== 'generate' ? ' Try again later.' : ''}`, details);
}

/** The error for a request that got no usable answer. */
export function errorFromTransportFailure(failure: TransportFailure, context: ErrorContext): TransportError {
	const details: ErrorDetails = { jobId: context.jobId, idempotencyKey: context.idempotencyKey, code: failure.failure };
	const action = whichRequest(context);
	const reasons: Record<TransportFailure['failure'], string> = {
		refused: 'the connection was refused. Check the base URL in the credential and that the service is up',
		timeout: 'no answer came in time',
		reset: 'the connection was cut',
		aborted: 'the request was cancelled',
		malformed: 'the answer could not be read',
		other: `the request failed (${failure.message})`,
	};
	const advice = failure.failure === 'refused' ? '' : unknownOutcomeAdvice(context);
	return new TransportError(`Could not ${action}: ${reasons[failure.failure]}.${advice}`, failure.failure, details);
}
