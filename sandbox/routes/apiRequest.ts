/* eslint-disable @n8n/community-nodes/no-restricted-imports -- dev tooling, never shipped in the n8n package */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PlanLimits } from '../../core/types';
import type { ApiKey } from '../accounts';
import { ECHO_ENCODINGS, isEchoEncoding } from '../echo';
import { bearerKey, errorReply, isNonJsonBody, readBody, send, sendHuge, MAX_JSON_BYTES, type Reply } from '../httpUtil';
import { selectScenarios, type ScenarioName } from '../scenarios';
import type { JournalEntry, SandboxState } from '../state';
import { API_ROUTES } from './api';
import { findRoute } from './router';

const INVALID = Symbol('invalid JSON');

/** The JSON body, INVALID when there is one that does not parse, undefined when there is none. */
function parseJson(raw: Buffer): unknown {
	if (raw.length === 0) return undefined;
	try {
		return JSON.parse(raw.toString('utf8')) as unknown;
	} catch {
		return INVALID;
	}
}

/**
 * Faults that refuse the request before any route sees it: echo-key, service-unavailable (or a
 * drawn 503), storms and the rate windows. A 503 comes before the windows, so it costs no request.
 */
function refusalBeforeRoute(
	state: SandboxState,
	req: IncomingMessage,
	key: ApiKey,
	limits: PlanLimits,
	scenarios: Set<ScenarioName>,
): Reply | undefined {
	const { config, storms, windows, clock, faults } = state;
	if (scenarios.has('echo-key')) {
		const name = (req.headers['x-sandbox-echo'] as string | undefined) ?? key.echo;
		const echoed = ECHO_ENCODINGS[isEchoEncoding(name) ? name : 'url'](key.key);
		return errorReply(403, 'forbidden', `The key ${echoed} may not do this.`, { 'X-Echoed-Key': echoed });
	}
	if (scenarios.has('service-unavailable') || faults.fails('unavailable')) {
		return errorReply(503, 'unavailable', 'The service is unavailable.', { 'Retry-After': '1' });
	}
	if (scenarios.has('rate-limit-storm') && !storms.has(key.key)) storms.set(key.key, config.stormLength);
	const storm = storms.get(key.key) ?? 0;
	if (storm > 0) {
		storms.set(key.key, storm - 1);
		return errorReply(429, 'rate_limited', 'Too many requests (storm).', { 'Retry-After': '1', ...state.rateHeaders(key) });
	}
	const taken = windows.take(key.key, limits, clock.now());
	if (taken.allowed) return undefined;
	return errorReply(429, 'rate_limited', `Rate limit of ${taken.window.limit} requests reached.`, {
		'Retry-After': String(state.retryAfterSeconds(taken.retryAtMs - clock.now())),
		...state.rateHeaders(key),
	});
}

/**
 * Every request under /api/: journaled, its key, body and scenarios checked in the order the
 * real service does, dispatched by API_ROUTES, then answered as the scenarios say (held, cut,
 * corrupted or swollen).
 */
export async function handleApiRequest(state: SandboxState, req: IncomingMessage, res: ServerResponse, url: URL, requestId: string): Promise<void> {
	const { accounts, config } = state;
	const method = req.method ?? 'GET';
	const entry: JournalEntry = { at: new Date(state.clock.now()).toISOString(), requestId, method, path: url.pathname, status: 0, scenarios: [] };
	state.journal.push(entry);
	const finish = (reply: Reply, raw?: string) => {
		entry.status = reply.status;
		send(res, state.tooManyRequests(reply), requestId, raw);
	};
	let raw: Buffer | 'too_large';
	try {
		raw = req.method === 'POST' ? await readBody(req, MAX_JSON_BYTES) : Buffer.alloc(0);
	} catch {
		// The client went away in the middle of its body.
		entry.status = 'reset';
		return void req.socket.destroy();
	}
	const key = accounts.find(bearerKey(req));
	if (!key || key.revoked) return finish(errorReply(401, 'unauthorized', 'Missing, unknown or revoked API key.'));
	entry.key = key.label;
	const limits = key.account.limits;
	if (!limits) return finish(errorReply(403, 'forbidden', "This account's plan has no API access."));
	if (raw === 'too_large') return finish(errorReply(413, 'file_too_large', 'The JSON body is too large.'));
	if (raw.length > 0 && isNonJsonBody(req)) {
		return finish(errorReply(415, 'unsupported_media_type', 'Send the body as JSON, with Content-Type: application/json.'));
	}
	const body = parseJson(raw);
	const scenarios = selectScenarios({
		key: key.scenarios,
		header: req.headers['x-sandbox-scenario'] as string | undefined,
		prompt: (body as { prompt?: unknown } | undefined)?.prompt,
	});
	entry.scenarios = [...scenarios];
	const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
	entry.idempotencyKey = idempotencyKey;
	const refusal = refusalBeforeRoute(state, req, key, limits, scenarios);
	if (refusal) return finish(refusal);

	const found = findRoute(API_ROUTES, method, url.pathname);
	let reply: Reply;
	if (body === INVALID) reply = errorReply(400, 'invalid_request', 'The body is not valid JSON.');
	else if (!found) reply = errorReply(404, 'not_found', `No endpoint ${method} ${url.pathname}.`);
	else reply = await found.route.handle({ state, key, body, scenarios, idempotencyKey, params: found.params });
	reply = { ...reply, headers: { ...state.rateHeaders(key), ...reply.headers } };

	const accepted = reply.status === 202 || (reply.status === 500 && scenarios.has('error-500-after-create'));
	if (scenarios.has('slow-response') && !found?.route.slowInside) await state.later(config.slowMs);
	if (accepted && scenarios.has('reset-after-accept')) {
		entry.status = 'reset';
		return void req.socket.destroy();
	}
	if (accepted && scenarios.has('timeout-after-accept')) {
		entry.status = 'timeout';
		await state.later(config.holdMs);
		return void req.socket.destroy();
	}
	if (scenarios.has('malformed-json')) return finish(reply, '{"id": "job_');
	if (scenarios.has('huge-answer')) {
		entry.status = reply.status;
		return sendHuge(res, state.tooManyRequests(reply), requestId, config.hugeAnswerBytes);
	}
	finish(reply);
}
