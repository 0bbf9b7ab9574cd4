import { RESPONSE_TOO_LARGE, type HttpResponse } from '../http/transport';
import {
	AuthError,
	CreditsError,
	NotFoundError,
	RateLimitError,
	ServiceError,
	TransportError,
	ValidationError,
	type ErrorDetails,
	type OmniVideoError,
	type TransportFailure,
} from './errors';
import { parseErrorBody } from '../answers/parseErrorBody';
import { MAX_PLAIN_REDIRECTS } from '../http/plainRequest';
import { refusedInput } from './inputRefusal';
import {
	action,
	capitalised,
	cleanText,
	createOutcomeAdvice,
	header,
	host,
	parseRetryAfter,
	quote,
	reference,
	resetDelayMs,
	sentence,
	type AnswerFacts,
	type ErrorContext,
} from './errorText';

export { parseRetryAfter, type ErrorContext, type Operation } from './errorText';

/**
 * How each answer that is not a 2xx becomes an error of the family, first matching rule first.
 * Each rule words what happened and what to do (also the error's `hint`).
 */
const RULES: Array<{ when: (a: AnswerFacts) => boolean; error: (a: AnswerFacts) => OmniVideoError }> = [
	{
		// A pre-signed storage URL answers 403 when it has expired: that is no API key problem.
		when: (a) => a.context.operation === 'uploadPut' && a.status >= 400 && a.status < 500 && a.status !== 413 && a.status !== 429,
		error: (a) =>
			withAdvice(a, "The upload link may have expired, or the file's type may differ from the one announced: run Upload Image again.", (message, details) =>
				new ValidationError(message, [], details), `The storage service refused the file${a.said}`),
	},
	{
		when: (a) => a.context.operation === 'download' && [401, 403, 404, 410].includes(a.status),
		error: (a) =>
			withAdvice(
				a,
				'The result link may have expired: download the video soon after the job finishes, or look the job up again with Get Job for its current result URLs.',
				(message, details) => new NotFoundError(message, details),
				`The video file could not be downloaded${a.said}`,
			),
	},
	{ when: (a) => a.status === 400 || a.status === 413 || a.status === 422, error: refusedInput },
	{
		when: (a) => a.status === 401,
		// The service's own words are left out: a 401 is where services echo the key they got.
		error: (a) =>
			withAdvice(
				a,
				'Check the API key in the credential: it may be mistyped, or revoked in the Omni Video dashboard.',
				(message, details) => new AuthError(message, details),
				`The Omni Video API did not accept the API key when trying to ${a.act}`,
			),
	},
	{
		when: (a) => a.status === 403,
		error: (a) =>
			withAdvice(
				a,
				'API access needs the Pro or Premium plan: upgrade the account in the Omni Video dashboard, or use a key of an account on one of those plans.',
				(message, details) => new AuthError(message, details),
				`This API key may not use the Omni Video API${a.said}`,
			),
	},
	{ when: (a) => a.status === 402, error: creditsError },
	{ when: (a) => a.status === 404, error: notFoundError },
	{ when: (a) => a.status === 429, error: rateLimitError },
	{ when: (a) => a.status === 409, error: conflictError },
];

/** The right error of the family for a non-2xx answer, with a message that says what to do. */
export function errorFromResponse(response: HttpResponse, context: ErrorContext): OmniVideoError {
	const { status } = response;
	const parsed = parseErrorBody(response.body);
	const requestId = parsed.requestId ?? header(response.headers, 'x-request-id');
	const facts: AnswerFacts = {
		status,
		code: parsed.code,
		message: parsed.message,
		context,
		ref: reference(status, parsed.code, requestId),
		said: quote(parsed.message),
		act: action(context),
		details: { status, code: parsed.code, requestId, jobId: context.jobId, idempotencyKey: context.idempotencyKey },
		headers: response.headers,
	};
	return (RULES.find((rule) => rule.when(facts))?.error ?? unexpectedAnswer)(facts);
}

/** The message "<happened> <ref>. <advice>" with the advice as the error's hint. */
function withAdvice<E extends OmniVideoError>(
	a: AnswerFacts,
	advice: string,
	make: (message: string, details: ErrorDetails) => E,
	happened: string,
): E {
	return make(sentence(happened, a.ref, advice), { ...a.details, hint: advice });
}

function creditsError(a: AnswerFacts): OmniVideoError {
	const budget = a.code === 'key_budget_exceeded';
	const happened = budget
		? `This API key's credit budget cannot cover the request to ${a.act}`
		: `The account does not have enough credits to ${a.act}`;
	const advice = budget
		? "Raise the key's budget in the Omni Video dashboard, or use another key."
		: 'Top up credits in the Omni Video dashboard, or choose a lower resolution or a shorter duration.';
	return withAdvice(a, advice, (message, details) => new CreditsError(message, details), happened);
}

function notFoundError(a: AnswerFacts): OmniVideoError {
	const make = (message: string, details: ErrorDetails) => new NotFoundError(message, details);
	if (a.context.jobId) {
		return withAdvice(
			a,
			'Check the job ID: it must come from Generate Video run with a key of the same account.',
			make,
			`No job ${a.context.jobId} was found for this API key's account`,
		);
	}
	return withAdvice(a, 'Check the base URL in the credential.', make, `The Omni Video API has no address for the request to ${a.act}`);
}

function rateLimitError(a: AnswerFacts): OmniVideoError {
	const retryAfterMs =
		parseRetryAfter(header(a.headers, 'retry-after'), a.context.nowMs) ??
		resetDelayMs(header(a.headers, 'x-ratelimit-reset'), a.context.nowMs);
	const wait = retryAfterMs === undefined ? 'Wait a minute' : `Wait ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s`;
	let happened = `The plan's request limit for this API key was reached when trying to ${a.act}`;
	let advice = `${wait}, then run again; every workflow using this key shares the limit.`;
	if (a.code === 'concurrency_limited') {
		happened = `The account already runs as many jobs at once as its plan allows (Pro 5, Premium 10), so it could not ${a.act}`;
		advice = `${wait}, then run again once a running job has finished; jobs of every workflow on the account count.`;
	} else if (a.code !== 'rate_limited' && a.context.operation === 'generate') {
		// The spec shows no 429 body: a service may not say which of its limits was reached.
		happened = `Omni Video answered "too many requests" without saying whether the plan's request limit or its jobs at once (Pro 5, Premium 10) were reached, so it could not ${a.act}`;
		advice = `${wait}, then run again; every workflow using this key, and every job running on the account, counts.`;
	} else if (a.context.operation === 'uploadPut' || a.context.operation === 'download') {
		happened = `${capitalised(host(a.context))} is limiting requests and could not ${a.act}`;
		advice = `${wait}, then run again.`;
	}
	return withAdvice(a, advice, (message, details) => new RateLimitError(message, { ...details, retryAfterMs }), happened);
}

function conflictError(a: AnswerFacts): OmniVideoError {
	const make = (message: string, details: ErrorDetails) => new ServiceError(message, details);
	if (a.code === 'idempotency_conflict' || a.context.operation === 'generate') {
		const key = a.context.idempotencyKey ? ` with idempotency key ${a.context.idempotencyKey}` : '';
		return withAdvice(
			a,
			'The first request will create the job: wait a moment, then run again with the same idempotency key to get it.',
			make,
			`An identical request${key} is still being processed`,
		);
	}
	return withAdvice(a, 'Wait a moment, then run again.', make, `The Omni Video API reported a conflict when trying to ${a.act}${a.said}`);
}

/** 5xx, redirects and anything else the API does not name. */
function unexpectedAnswer(a: AnswerFacts): OmniVideoError {
	const who = capitalised(host(a.context));
	let happened: string;
	let advice: string;
	if (a.status >= 500) {
		const down = a.status === 503 || a.code === 'unavailable';
		happened = `${who} ${down ? 'is unavailable and could not' : 'failed to'} ${a.act}${a.said}`;
		advice = 'Try again in a few minutes.';
	} else {
		happened = `${who} gave an unexpected answer when trying to ${a.act}${a.said}`;
		const onApi = host(a.context) === 'the Omni Video API';
		advice =
			a.status >= 300 && a.status < 400
				? onApi
					? 'Check the base URL in the credential: the API answers without redirects.'
					: `It redirected more than ${MAX_PLAIN_REDIRECTS} times: try again later, or contact Omni Video support with the request id.`
				: 'Try again later; if this keeps happening, contact Omni Video support with the request id.';
	}
	if (a.context.operation === 'generate') advice = createOutcomeAdvice(a.context);
	return withAdvice(a, advice, (message, details) => new ServiceError(message, details), happened);
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
