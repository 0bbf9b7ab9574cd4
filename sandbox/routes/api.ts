import type { ApiKey } from '../accounts';
import { decodeSegment, errorReply, jsonReply, type Reply } from '../httpUtil';
import type { FailureCode, GenerateBody } from '../jobs';
import type { ScenarioName } from '../scenarios';
import type { SandboxState } from '../state';
import { isReply, validateGenerateBody, validateUploadBody } from '../validation';
import type { PathParams, Route } from './router';

/** One API request that passed the key, the rate limits and the body's parsing (apiRequest.ts). */
export interface ApiCall {
	state: SandboxState;
	key: ApiKey;
	body: unknown;
	scenarios: Set<ScenarioName>;
	idempotencyKey?: string;
	params: PathParams;
}

export type ApiRoute = Route<(call: ApiCall) => Reply | Promise<Reply>> & {
	/** The route applies `slow-response` itself, while its Idempotency-Key is in flight. */
	slowInside?: boolean;
};

/** A source on the sandbox's own file storage that was never uploaded cannot be fetched. */
function sourceFailure(state: SandboxState, body: GenerateBody): FailureCode | undefined {
	for (const source of [body.imageUrl, body.videoUrl]) {
		if (!source || !source.startsWith(state.baseUrl)) continue;
		if (!state.uploads.fileAt(new URL(source).pathname)) return 'input_fetch_failed';
	}
	return undefined;
}

function scenarioFailure(scenarios: Set<ScenarioName>): FailureCode | undefined {
	if (scenarios.has('job-fails-content-policy')) return 'content_policy';
	if (scenarios.has('job-fails-internal')) return 'internal';
	if (scenarios.has('job-fails-input-fetch')) return 'input_fetch_failed';
	if (scenarios.has('job-fails-timeout')) return 'timeout';
	return undefined;
}

function createJob({ state, key, scenarios }: ApiCall, body: GenerateBody, concurrentJobs: number): Reply {
	const { jobs, clock, accounts, config } = state;
	if (scenarios.has('error-500-before-accept')) return errorReply(500, 'internal', 'Internal error; no job was created.');
	if (jobs.activeCount(key.account.id) >= concurrentJobs) {
		const now = clock.now();
		let firstEnd = Infinity;
		for (const job of jobs.all.values()) {
			if (!job.finished && job.key.account.id === key.account.id) firstEnd = Math.min(firstEnd, job.endsAt);
		}
		return errorReply(429, 'concurrency_limited', `The plan allows ${concurrentJobs} jobs at once.`, {
			'Retry-After': String(state.retryAfterSeconds(firstEnd - now)),
		});
	}
	const price = body.duration * config.prices[body.resolution];
	const refusal = accounts.refusal(key, price);
	if (refusal === 'key_budget_exceeded') {
		return errorReply(402, refusal, `This key's credit budget cannot cover ${price} credits.`);
	}
	if (refusal) return errorReply(402, refusal, `The account has too few credits for ${price} credits.`);
	const job = jobs.create(key, body, price, {
		failure: scenarioFailure(scenarios) ?? sourceFailure(state, body),
		largeOutput: scenarios.has('large-output'),
		callbackDelayMs: scenarios.has('callback-out-of-order') ? 120_000 : 0,
		duplicateCallbacks: scenarios.has('callback-duplicate'),
	});
	return jsonReply(202, { id: job.id, status: 'queued', creditsQueued: price }, { Location: `/api/v1/jobs/${encodeURIComponent(job.id)}` });
}

/** The Idempotency-Key as the service profile reads it: a service that ignores keys never sees one. */
function honoured(state: SandboxState, idempotencyKey: string | undefined): string | undefined {
	return state.config.idempotencyKeys === 'replayed' ? idempotencyKey : undefined;
}

async function generate(call: ApiCall): Promise<Reply> {
	const { state, key, body, scenarios, idempotencyKey } = call;
	const checked = validateGenerateBody(body, state.config.insecureCallbacks);
	if (isReply(checked)) return checked;
	const limits = key.account.limits;
	if (!limits) return errorReply(403, 'forbidden', 'This plan has no API access.');
	let created = false;
	const reply = await state.idempotency.once(key.account.id, honoured(state, idempotencyKey), body, state.clock.now(), async () => {
		// A slow service is slow while it works: the key stays in flight meanwhile.
		if (scenarios.has('slow-response')) await state.later(state.config.slowMs);
		const answer = createJob(call, checked, limits.concurrentJobs);
		created = answer.status === 202;
		return answer;
	});
	// Stored and replayed as the 202 it was: only the first answer is lost.
	if (created && scenarios.has('error-500-after-create')) {
		return errorReply(500, 'internal', 'Internal error after the job was created.');
	}
	return reply;
}

function lookUpJob({ state, key, params }: ApiCall): Reply {
	const id = decodeSegment(params.id);
	if (id === undefined) return errorReply(400, 'invalid_request', 'The job id in the path is not valid percent-encoding.');
	const job = state.jobs.find(id, key.account.id);
	return job ? jsonReply(200, state.jobs.record(job)) : errorReply(404, 'not_found', `No job ${id} for this account.`);
}

function uploadTicket({ state, key, body, scenarios, idempotencyKey }: ApiCall): Promise<Reply> | Reply {
	const { uploads, clock, baseUrl } = state;
	const checked = validateUploadBody(body, state.config.maxUploadBytes);
	if (isReply(checked)) return checked;
	return state.idempotency.once(`${key.account.id}:upload`, honoured(state, idempotencyKey), body, clock.now(), () => {
		const redirect = scenarios.has('upload-redirect-loop') ? 'loop' : scenarios.has('upload-redirect') ? 'chain' : undefined;
		const ticket = uploads.create(checked.filename, checked.contentType, checked.size, clock.now(), redirect);
		return jsonReply(200, {
			uploadUrl: baseUrl + uploads.uploadPath(ticket),
			fileUrl: baseUrl + uploads.filePath(ticket),
			method: 'PUT',
			headers: { 'Content-Type': ticket.contentType },
			expiresAt: new Date(ticket.expiresAt).toISOString(),
		});
	});
}

/** The Omni Video API (docs/api.md#endpoints), every path and method of the OpenAPI document under /api/. */
export const API_ROUTES: readonly ApiRoute[] = [
	{ method: 'POST', path: '/api/v1/generate', handle: generate, slowInside: true },
	{ method: 'GET', path: '/api/v1/jobs/{id}', handle: lookUpJob },
	{ method: 'POST', path: '/api/upload', handle: uploadTicket },
];
