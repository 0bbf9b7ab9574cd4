import {
	AuthError,
	CreditsError,
	NotFoundError,
	RateLimitError,
	ServiceError,
	TransportError,
	TransportFailure,
	ValidationError,
	unsaidDetails,
} from '../../core/errors/errors';
import { errorFromResponse, errorFromTransportFailure, parseRetryAfter, type ErrorContext } from '../../core/errors/httpErrors';
import type { HttpResponse } from '../../core/http/transport';

const NOW = Date.UTC(2026, 4, 1, 12, 0, 0);
const create: ErrorContext = { operation: 'generate', nowMs: NOW, idempotencyKey: 'idem_abc' };
const lookup: ErrorContext = { operation: 'getJob', nowMs: NOW, jobId: 'job_42' };

function response(status: number, code: string, headers: Record<string, string> = {}): HttpResponse {
	return {
		status,
		headers: { 'x-request-id': 'req_hdr', ...headers },
		body: { error: { code, message: `message for ${code}`, requestId: 'req_body' } },
	};
}

describe('errors from the contract table', () => {
	it.each([
		[400, 'invalid_request', ValidationError, undefined],
		[400, 'prompt_too_long', ValidationError, 'prompt'],
		[400, 'invalid_resolution', ValidationError, 'resolution'],
		[400, 'invalid_duration', ValidationError, 'duration'],
		[400, 'invalid_model', ValidationError, 'model'],
		[400, 'conflicting_inputs', ValidationError, 'videoUrl'],
		[400, 'invalid_callback_url', ValidationError, 'callbackUrl'],
		// On a create the JSON body is too large, not a file: no field named `data` (see below).
		[413, 'file_too_large', ValidationError, undefined],
		[422, 'idempotency_key_reused', ValidationError, undefined],
	])('%i %s is a ValidationError about %s', (status, code, type, field) => {
		const error = errorFromResponse(response(status, code), create);
		expect(error).toBeInstanceOf(type);
		expect(error).toMatchObject({ status, code, requestId: 'req_body' });
		const problems = (error as ValidationError).problems;
		if (field) expect(problems.map((p) => p.field)).toEqual([field]);
		else expect(problems).toEqual([]);
		// The service's own words are kept, except where our sentence says it better (422).
		if (status !== 422) expect(error.message).toContain(`message for ${code}`);
	});

	it('413 on an upload is about the file; on a create, about the request, never "use a smaller file"', () => {
		const upload = errorFromResponse(response(413, 'file_too_large'), { operation: 'upload', nowMs: NOW }) as ValidationError;
		expect(upload.problems.map((p) => p.field)).toEqual(['data']);
		expect(upload.message).toMatch(/file is too large/);
		const created = errorFromResponse(response(413, 'file_too_large'), create) as ValidationError;
		expect(created.message).toMatch(/request is too large/);
		expect(created.message).not.toMatch(/file is too large|smaller file/);
		expect(created.hint).toMatch(/Image URL/);
	});

	it('names the reused idempotency key', () => {
		expect(errorFromResponse(response(422, 'idempotency_key_reused'), create).message).toContain('idem_abc');
	});

	it('401 and 403 are AuthErrors that say what to check', () => {
		const unauthorized = errorFromResponse(response(401, 'unauthorized'), lookup);
		expect(unauthorized).toBeInstanceOf(AuthError);
		expect(unauthorized.message).toMatch(/revoked/);
		const forbidden = errorFromResponse(response(403, 'forbidden'), lookup);
		expect(forbidden).toBeInstanceOf(AuthError);
		expect(forbidden.message).toMatch(/Pro or Premium/);
	});

	it('402 tells the key budget from the account balance', () => {
		const budget = errorFromResponse(response(402, 'key_budget_exceeded'), create);
		const account = errorFromResponse(response(402, 'insufficient_credits'), create);
		expect(budget).toBeInstanceOf(CreditsError);
		expect(account).toBeInstanceOf(CreditsError);
		expect(budget.message).toMatch(/key's budget/);
		expect(account.message).toMatch(/top up/i);
	});

	it('404 names the job', () => {
		const error = errorFromResponse(response(404, 'not_found'), lookup);
		expect(error).toBeInstanceOf(NotFoundError);
		expect(error).toMatchObject({ jobId: 'job_42' });
		expect(error.message).toContain('job_42');
	});

	it('409 idempotency_conflict says to wait', () => {
		const error = errorFromResponse(response(409, 'idempotency_conflict'), create);
		expect(error).toBeInstanceOf(ServiceError);
		expect(error.message).toMatch(/still being processed/);
	});

	it.each(['rate_limited', 'concurrency_limited'])('429 %s carries the Retry-After', (code) => {
		const error = errorFromResponse(response(429, code, { 'retry-after': '17' }), create);
		expect(error).toBeInstanceOf(RateLimitError);
		expect(error).toMatchObject({ retryAfterMs: 17_000, code });
		expect(error.message).toContain('17 s');
		expect(error.message).not.toContain('idem_abc');
	});

	it.each([
		[500, 'internal'],
		[502, 'unavailable'],
		[503, 'unavailable'],
	])('%i %s on a create warns that the job may exist and names the key', (status, code) => {
		const error = errorFromResponse(response(status, code), create);
		expect(error).toBeInstanceOf(ServiceError);
		expect(error.message).toContain('may or may not have been created');
		expect(error.message).toContain('idem_abc');
	});

	it('5xx on a lookup says to try later, without the create warning', () => {
		const error = errorFromResponse(response(503, 'unavailable'), lookup);
		expect(error.message).toMatch(/try again/i);
		expect(error.message).not.toContain('may or may not');
	});

	it('an unlisted status is a ServiceError', () => {
		expect(errorFromResponse({ status: 418, headers: {}, body: undefined }, lookup)).toBeInstanceOf(ServiceError);
	});

	it('a refused PUT to storage says the link may have expired', () => {
		const error = errorFromResponse({ status: 403, headers: {}, body: 'Request has expired' }, { operation: 'uploadPut', nowMs: NOW });
		expect(error).toBeInstanceOf(ValidationError);
		expect(error.message).toMatch(/expired/);
	});
});

describe('error body shapes', () => {
	it.each([
		[{ error: { code: 'invalid_duration', message: 'm1', requestId: 'req_1' } }, 'invalid_duration', 'req_1', 'm1'],
		[{ error: 'm2' }, undefined, 'req_hdr', 'm2'],
		[{ message: 'm3', code: 'c3' }, 'c3', 'req_hdr', 'm3'],
		[{ detail: 'm4' }, undefined, 'req_hdr', 'm4'],
		[{ title: 'm5', type: 'c5' }, 'c5', 'req_hdr', 'm5'],
		[{ code: 'c6', request_id: 'req_6' }, 'c6', 'req_6', undefined],
		['plain text m7', undefined, 'req_hdr', 'plain text m7'],
		[undefined, undefined, 'req_hdr', undefined],
	])('reads %j', (body, code, requestId, message) => {
		const error = errorFromResponse({ status: 400, headers: { 'x-request-id': 'req_hdr' }, body }, lookup);
		expect(error).toMatchObject({ code, requestId });
		if (message) expect(error.message).toContain(message);
		expect(error.message).toContain(`request ${requestId}`);
	});
});

describe('Retry-After', () => {
	it('reads seconds and HTTP dates', () => {
		expect(parseRetryAfter('5', NOW)).toBe(5_000);
		expect(parseRetryAfter('1.5', NOW)).toBe(1_500);
		expect(parseRetryAfter(new Date(NOW + 30_000).toUTCString(), NOW)).toBe(30_000);
		expect(parseRetryAfter(new Date(NOW - 30_000).toUTCString(), NOW)).toBe(0);
		expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
		expect(parseRetryAfter('soon', NOW)).toBeUndefined();
	});
});

describe('transport failures', () => {
	it('a refused connection does not claim a job may exist', () => {
		const error = errorFromTransportFailure(new TransportFailure('refused', 'ECONNREFUSED'), create);
		expect(error).toBeInstanceOf(TransportError);
		expect(error.outcomeUnknown).toBe(false);
		expect(error.message).toMatch(/base URL/);
		expect(error.message).not.toContain('idem_abc');
	});

	it.each(['timeout', 'reset', 'malformed', 'other'] as const)('a create ending in %s names the key', (failure) => {
		const error = errorFromTransportFailure(new TransportFailure(failure, 'x'), create);
		expect(error.outcomeUnknown).toBe(true);
		expect(error.message).toContain('idem_abc');
		expect(error).toMatchObject({ idempotencyKey: 'idem_abc', failure });
	});
});

describe('what a message does not say already', () => {
	it('gives the hint and ids a host may show beside the message, only when the message lacks them', () => {
		const said = new NotFoundError('No job job_1 was found. Check the job id.', { jobId: 'job_1', requestId: 'req_1', hint: 'Check the job id.' });
		expect(unsaidDetails(said)).toEqual({ hint: undefined, jobId: undefined, requestId: 'req_1' });
		const bare = new NotFoundError('No such job.', { jobId: 'job_2', hint: 'Check the job id.' });
		expect(unsaidDetails(bare)).toEqual({ hint: 'Check the job id.', jobId: 'job_2', requestId: undefined });
	});
});
