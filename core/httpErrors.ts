import { RESPONSE_TOO_LARGE, type HttpResponse } from './transport';
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
import { MAX_PLAIN_REDIRECTS } from './plainRequest';

/*
 * Every message reads "<what happened> (<status> <code>, request <id>). <what to do>." and the
 * "what to do" part is also the error's `hint`. Only response headers are read here: request
 * headers (and with them the API key) never reach an error.
 */

/** Which call failed: it decides what the message tells the user to do. */
export type Operation =
	| 'generate'
	| 'getJob'
	| 'upload'
	| 'uploadPut'
	| 'download'
	| 'credentialTest';

export interface ErrorContext {
	operation: Operation;
	nowMs: number;
	jobId?: string;
	idempotencyKey?: string;
}

const MAX_QUOTED_CHARS = 200;

/** Retry-After in seconds or as an HTTP date, as milliseconds from now (never negative). */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
	if (typeof value !== 'string') return undefined;
	const text = value.trim();
	if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
	// An HTTP date names a weekday and a month; Date.parse alone would read "-5" as a year.
	if (!/[a-z]/i.test(text)) return undefined;
	const date = Date.parse(text);
	return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** The input field each 400/413 code is about. */
const FIELD_OF_CODE: Record<string, string> = {
	prompt_too_long: 'prompt',
	invalid_resolution: 'resolution',
	invalid_duration: 'duration',
	invalid_model: 'model',
	conflicting_inputs: 'videoUrl',
	invalid_callback_url: 'callbackUrl',
	file_too_large: 'data',
};

/** What a problem says when the service gave a code but no message. */
const PROBLEM_OF_CODE: Record<string, string> = {
	prompt_too_long: 'The prompt is too long: at most 2000 characters.',
	invalid_resolution: 'The resolution must be 720P, 1080P or 4K.',
	invalid_duration: 'The duration must be between 4 and 10 seconds.',
	invalid_model: 'The model must be omni-video.',
	conflicting_inputs: 'Image URL and Video URL cannot be combined: pick one.',
	invalid_callback_url: 'The callback URL must be a full https:// address.',
	file_too_large: 'The file is too large.',
};

const LABEL_OF_FIELD: Record<string, string> = {
	prompt: 'the prompt',
	resolution: 'the resolution',
	duration: 'the duration',
	model: 'the model',
	videoUrl: 'Image URL or Video URL',
	callbackUrl: 'the callback URL',
	data: 'the file',
};

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
	if (!headers) return undefined;
	if (headers[name] !== undefined) return headers[name];
	// Transports should lower-case names; one that does not must not lose the request id.
	const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
	return key === undefined ? undefined : headers[key];
}

/** The rate window's reset, for a 429 that came without Retry-After. */
function resetDelayMs(value: string | undefined, nowMs: number): number | undefined {
	if (value === undefined || !/^\d+(\.\d+)?$/.test(value.trim())) return undefined;
	const number = Number(value);
	// Decided as Unix seconds (docs/api.md#headers); small values can only be a delay in seconds.
	return number > 1e9 ? Math.max(0, Math.round(number * 1000 - nowMs)) : Math.round(number * 1000);
}

/** Text from the service made safe to show: one line, short, never a credential it echoed. */
function cleanText(text: string | undefined): string {
	if (text === undefined) return '';
	const clean = text
		.replace(/\b(Bearer|Basic)\s+\S+/gi, '$1 [redacted]')
		.replace(/\s+/g, ' ')
		.trim()
		.replace(/[.\s]+$/, '');
	const chars = [...clean];
	return chars.length > MAX_QUOTED_CHARS
		? `${chars.slice(0, MAX_QUOTED_CHARS - 1).join('')}…`
		: clean;
}

/** The service's own words, ready to follow what happened. */
function quote(text: string | undefined): string {
	const clean = cleanText(text);
	return clean === '' ? '' : `: ${clean}`;
}

function reference(
	status: number,
	code: string | undefined,
	requestId: string | undefined,
): string {
	const parts = code ? `${status} ${code}` : String(status);
	return requestId ? `(${parts}, request ${requestId})` : `(${parts})`;
}

/** The request in the user's words, with the job id whenever it is known. */
function action(context: ErrorContext): string {
	const { jobId } = context;
	const forJob = jobId ? ` for job ${jobId}` : '';
	switch (context.operation) {
		case 'generate':
			return `create the video job${forJob}`;
		case 'getJob':
			return jobId ? `look up job ${jobId}` : 'look up the job';
		case 'upload':
			return `prepare the file upload${forJob}`;
		case 'uploadPut':
			return `upload the file to storage${forJob}`;
		case 'download':
			return jobId ? `download the video of job ${jobId}` : 'download the video';
		case 'credentialTest':
			return `check the API key${forJob}`;
	}
}

/** Who answered: uploads and downloads go to storage hosts, not to the API. */
function host(context: ErrorContext): string {
	if (context.operation === 'uploadPut') return 'the storage service';
	if (context.operation === 'download') return 'the video host';
	return 'the Omni Video API';
}

function capitalised(text: string): string {
	return text.charAt(0).toUpperCase() + text.slice(1);
}

/** For a create that may have reached the service: how to avoid paying twice. */
function createOutcomeAdvice(context: ErrorContext): string {
	const rerun = context.idempotencyKey
		? `; rerunning with the same idempotency key ${context.idempotencyKey} is safe where the service honours it`
		: ', so that the video is not paid for twice';
	return `The job may or may not have been created. Before running again, check your Omni Video dashboard${rerun}.`;
}

function sentence(happened: string, ref: string, advice: string): string {
	return advice === '' ? `${happened} ${ref}.` : `${happened} ${ref}. ${advice}`;
}

function refusedInput(
	response: HttpResponse,
	context: ErrorContext,
	parsed: { message?: string; code?: string },
	ref: string,
	details: ErrorDetails,
): ValidationError {
	const { status } = response;
	const { code } = parsed;
	// A 413 on a create is the JSON body, not a file: no field of the input is named `data`.
	const isBodyTooLarge = status === 413 && context.operation === 'generate';
	const field =
		(code && !isBodyTooLarge ? FIELD_OF_CODE[code] : undefined) ??
		(status === 413 && !isBodyTooLarge ? 'data' : undefined);
	const problems: FieldProblem[] = field
		? [
				{
					field,
					// The service does not echo the value; the adapter knows what it sent.
					value: undefined,
					message:
						parsed.message ??
						(code ? PROBLEM_OF_CODE[code] : undefined) ??
						'The service refused it.',
				},
			]
		: [];
	let happened = `The Omni Video API refused the request to ${action(context)}${quote(parsed.message)}`;
	let advice = 'Correct the input and run again.';
	if (code === 'idempotency_key_reused') {
		const key = context.idempotencyKey ? ` ${context.idempotencyKey}` : '';
		happened = `The idempotency key${key} was already used for a different request`;
		advice =
			'Use a new idempotency key for new input; reuse a key only to repeat exactly the same request.';
	} else if (isBodyTooLarge) {
		happened = `The request is too large for the Omni Video API${quote(parsed.message)}`;
		advice =
			'Shorten the prompt, and pass Image URL, Video URL and Callback URL as addresses (the file URL from Upload Image), never as a file\'s content.';
	} else if (status === 413) {
		happened = `The file is too large for the Omni Video API${quote(parsed.message)}`;
		advice = 'Use a smaller file, for example a shorter clip or a smaller image.';
	} else if (field) {
		advice = `Correct ${LABEL_OF_FIELD[field] ?? field} and run again.`;
	} else if (context.operation === 'getJob') {
		advice = 'Check the job ID and run again.';
	} else if (context.operation === 'upload') {
		advice = 'Check the file and run again.';
	}
	return new ValidationError(sentence(happened, ref, advice), problems, {
		...details,
		hint: advice,
	});
}

/** The right error of the family for a non-2xx answer, with a message that says what to do. */
export function errorFromResponse(response: HttpResponse, context: ErrorContext): OmniVideoError {
	const { status } = response;
	const parsed = parseErrorBody(response.body);
	const { code } = parsed;
	const requestId = parsed.requestId ?? header(response.headers, 'x-request-id');
	const details: ErrorDetails = {
		status,
		code,
		requestId,
		jobId: context.jobId,
		idempotencyKey: context.idempotencyKey,
	};
	const ref = reference(status, code, requestId);
	const said = quote(parsed.message);
	const act = action(context);
	const withHint = (advice: string): ErrorDetails => ({ ...details, hint: advice });
	const isClientError = status >= 400 && status < 500;

	// A pre-signed storage URL answers 403 when it has expired: that is no API key problem.
	if (context.operation === 'uploadPut' && isClientError && status !== 413 && status !== 429) {
		const advice =
			"The upload link may have expired, or the file's type may differ from the one announced: run Upload Image again.";
		return new ValidationError(
			sentence(`The storage service refused the file${said}`, ref, advice),
			[],
			withHint(advice),
		);
	}
	if (context.operation === 'download' && [401, 403, 404, 410].includes(status)) {
		const advice =
			'The result link may have expired: download the video soon after the job finishes, or look the job up again with Get Job for its current result URLs.';
		return new NotFoundError(
			sentence(`The video file could not be downloaded${said}`, ref, advice),
			withHint(advice),
		);
	}
	if (status === 400 || status === 413 || status === 422) {
		return refusedInput(response, context, parsed, ref, details);
	}
	if (status === 401) {
		// The service's own words are left out: a 401 is where services echo the key they got.
		const advice =
			'Check the API key in the credential: it may be mistyped, or revoked in the Omni Video dashboard.';
		return new AuthError(
			sentence(`The Omni Video API did not accept the API key when trying to ${act}`, ref, advice),
			withHint(advice),
		);
	}
	if (status === 403) {
		const advice =
			'API access needs the Pro or Premium plan: upgrade the account in the Omni Video dashboard, or use a key of an account on one of those plans.';
		return new AuthError(
			sentence(`This API key may not use the Omni Video API${said}`, ref, advice),
			withHint(advice),
		);
	}
	if (status === 402) {
		const budget = code === 'key_budget_exceeded';
		const happened = budget
			? `This API key's credit budget cannot cover the request to ${act}`
			: `The account does not have enough credits to ${act}`;
		const advice = budget
			? "Raise the key's budget in the Omni Video dashboard, or use another key."
			: 'Top up credits in the Omni Video dashboard, or choose a lower resolution or a shorter duration.';
		return new CreditsError(sentence(happened, ref, advice), withHint(advice));
	}
	if (status === 404) {
		if (context.jobId) {
			const advice =
				'Check the job ID: it must come from Generate Video run with a key of the same account.';
			return new NotFoundError(
				sentence(`No job ${context.jobId} was found for this API key's account`, ref, advice),
				withHint(advice),
			);
		}
		const advice = 'Check the base URL in the credential.';
		return new NotFoundError(
			sentence(`The Omni Video API has no address for the request to ${act}`, ref, advice),
			withHint(advice),
		);
	}
	if (status === 429) {
		const retryAfterMs =
			parseRetryAfter(header(response.headers, 'retry-after'), context.nowMs) ??
			resetDelayMs(header(response.headers, 'x-ratelimit-reset'), context.nowMs);
		const wait =
			retryAfterMs === undefined
				? 'Wait a minute'
				: `Wait ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s`;
		let happened = `The plan's request limit for this API key was reached when trying to ${act}`;
		let advice = `${wait}, then run again; every workflow using this key shares the limit.`;
		if (code === 'concurrency_limited') {
			happened = `The account already runs as many jobs at once as its plan allows (Pro 5, Premium 10), so it could not ${act}`;
			advice = `${wait}, then run again once a running job has finished; jobs of every workflow on the account count.`;
		} else if (context.operation === 'uploadPut' || context.operation === 'download') {
			happened = `${capitalised(host(context))} is limiting requests and could not ${act}`;
			advice = `${wait}, then run again.`;
		}
		return new RateLimitError(sentence(happened, ref, advice), {
			...withHint(advice),
			retryAfterMs,
		});
	}
	if (status === 409) {
		if (code === 'idempotency_conflict' || context.operation === 'generate') {
			const key = context.idempotencyKey ? ` with idempotency key ${context.idempotencyKey}` : '';
			const advice =
				'The first request will create the job: wait a moment, then run again with the same idempotency key to get it.';
			return new ServiceError(
				sentence(`An identical request${key} is still being processed`, ref, advice),
				withHint(advice),
			);
		}
		const advice = 'Wait a moment, then run again.';
		return new ServiceError(
			sentence(`The Omni Video API reported a conflict when trying to ${act}${said}`, ref, advice),
			withHint(advice),
		);
	}
	const who = capitalised(host(context));
	let happened: string;
	let advice: string;
	if (status >= 500) {
		const down = status === 503 || code === 'unavailable';
		happened = `${who} ${down ? 'is unavailable and could not' : 'failed to'} ${act}${said}`;
		advice = 'Try again in a few minutes.';
	} else {
		happened = `${who} gave an unexpected answer when trying to ${act}${said}`;
		const onApi = host(context) === 'the Omni Video API';
		advice =
			status >= 300 && status < 400
				? onApi
					? 'Check the base URL in the credential: the API answers without redirects.'
					: `It redirected more than ${MAX_PLAIN_REDIRECTS} times: try again later, or contact Omni Video support with the request id.`
				: 'Try again later; if this keeps happening, contact Omni Video support with the request id.';
	}
	if (context.operation === 'generate') advice = createOutcomeAdvice(context);
	return new ServiceError(sentence(happened, ref, advice), withHint(advice));
}

/** The error for a request that got no usable answer, keeping the kind of failure. */
export function errorFromTransportFailure(
	failure: TransportFailure,
	context: ErrorContext,
): TransportError {
	const act = action(context);
	const where = host(context);
	const onApi = where === 'the Omni Video API';
	let happened: string;
	let advice = 'Try again in a few minutes.';
	switch (failure.failure) {
		case 'refused':
			happened = `Could not connect to ${where} to ${act} (connection refused)`;
			advice = onApi
				? 'Check the base URL in the credential and that the service is running, then run again.'
				: 'Run again in a few minutes.';
			break;
		case 'timeout':
			happened = `No answer came from ${where} in time when trying to ${act} (timeout)`;
			break;
		case 'reset':
			happened = `The connection to ${where} was cut when trying to ${act} (connection reset)`;
			break;
		case 'aborted':
			happened = `The request to ${act} was cancelled before ${where} answered (cancelled)`;
			advice = '';
			break;
		case 'malformed':
			happened =
				failure.code === RESPONSE_TOO_LARGE
					? `The answer of ${where} was far larger than expected when trying to ${act} (${failure.message}), so it was not read`
					: `The answer of ${where} could not be read when trying to ${act} (malformed response)`;
			break;
		case 'other':
			happened = `The request to ${act} failed (${cleanText(failure.message) || 'no reason given'})`;
			break;
	}
	// Only a refused connection proves that no job was created.
	if (context.operation === 'generate' && failure.failure !== 'refused') {
		advice = createOutcomeAdvice(context);
	}
	return new TransportError(
		advice === '' ? `${happened}.` : `${happened}. ${advice}`,
		failure.failure,
		{
			code: failure.code ?? failure.failure,
			jobId: context.jobId,
			idempotencyKey: context.idempotencyKey,
			hint: advice === '' ? undefined : advice,
		},
	);
}
