/* eslint-disable @n8n/community-nodes/no-restricted-imports -- dev tooling, never shipped in the n8n package */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { faultRatesProblem, type FaultRateConfig } from '../faultRates';
import { errorReply, jsonReply, readBody, send, MAX_JSON_BYTES, type Reply } from '../httpUtil';
import { SCENARIOS } from '../scenarios';
import { serviceReading } from '../service';
import type { SandboxState } from '../state';
import { findRoute, type Route } from './router';

type AdminBody = Record<string, unknown>;

export type AdminRoute = Route<(state: SandboxState, body: AdminBody) => Reply>;

/** Bounds that keep the virtual clock a valid date. */
const MAX_SPEED = 1_000_000;
const MAX_ADVANCE_MS = 10 * 365 * 24 * 3_600_000;

function isWithin(value: unknown, max: number): boolean {
	return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= max;
}

/** An admin request's JSON object (empty when there is no body), or undefined when it is not one. */
function adminBody(raw: Buffer): AdminBody | undefined {
	if (raw.length === 0) return {};
	try {
		const value: unknown = JSON.parse(raw.toString('utf8'));
		return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as AdminBody) : undefined;
	} catch {
		return undefined;
	}
}

/** `clientClock: 'sandbox'` asks clients to keep this clock (the n8n node reads it: nodes/shared/hostClock.ts). */
function clockReading({ clock, clientsOnSandboxClock }: SandboxState): Reply {
	const nowMs = clock.now();
	return jsonReply(200, { now: new Date(nowMs).toISOString(), nowMs, speed: clock.speed, clientClock: clientsOnSandboxClock ? 'sandbox' : 'real' });
}

function setClock(state: SandboxState, body: AdminBody): Reply {
	if (body.speed !== undefined && !isWithin(body.speed, MAX_SPEED)) {
		return errorReply(400, 'invalid_request', `speed must be a number above 0, at most ${MAX_SPEED}.`);
	}
	if (body.advanceMs !== undefined && !isWithin(body.advanceMs, MAX_ADVANCE_MS)) {
		return errorReply(400, 'invalid_request', `advanceMs must be a number of milliseconds above 0, at most ${MAX_ADVANCE_MS}.`);
	}
	if (body.speed !== undefined) state.clock.setSpeed(body.speed as number);
	if (body.advanceMs !== undefined) state.clock.advance(body.advanceMs as number);
	return clockReading(state);
}

function addKey({ accounts }: SandboxState, body: AdminBody): Reply {
	if (typeof body.key !== 'string' || body.key.length < 4) return errorReply(400, 'invalid_request', 'key must be a string of at least 4 characters.');
	const account = String(body.account ?? 'acct_pro');
	if (!accounts.accounts.has(account)) return errorReply(404, 'not_found', `No account ${account}.`);
	const added = accounts.addKey({
		key: body.key,
		account,
		budget: typeof body.budget === 'number' ? body.budget : undefined,
		revoked: body.revoked === true,
		scenarios: Array.isArray(body.scenarios) ? body.scenarios.map(String) : undefined,
		label: typeof body.label === 'string' ? body.label : undefined,
		echo: typeof body.echo === 'string' ? body.echo : undefined,
	});
	return jsonReply(201, { label: added.label, account: added.account.id });
}

function setFaults({ faults }: SandboxState, body: AdminBody): Reply {
	const problem = faultRatesProblem(body);
	if (problem) return errorReply(400, 'invalid_request', problem);
	faults.set(body as FaultRateConfig);
	return jsonReply(200, faults.current);
}

/** The admin API (no key): what the sandbox saw, and the knobs tests turn. sandbox/README.md lists it. */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
	{ method: 'GET', path: '/__sandbox/requests', handle: ({ journal }) => jsonReply(200, journal) },
	{
		method: 'GET',
		path: '/__sandbox/jobs',
		handle: ({ jobs }) =>
			jsonReply(
				200,
				[...jobs.all.values()].map((job) => ({ ...jobs.record(job), key: job.key.label, account: job.key.account.id, request: job.body })),
			),
	},
	{ method: 'GET', path: '/__sandbox/callbacks', handle: ({ callbacks }) => jsonReply(200, callbacks.attempts) },
	{
		method: 'GET',
		path: '/__sandbox/accounts',
		handle: ({ accounts }) =>
			jsonReply(
				200,
				[...accounts.accounts.values()].map((a) => ({ id: a.id, balance: a.balance, reserved: a.reserved, limits: a.limits ?? null })),
			),
	},
	{ method: 'GET', path: '/__sandbox/scenarios', handle: () => jsonReply(200, SCENARIOS) },
	{ method: 'GET', path: '/__sandbox/clock', handle: clockReading },
	{ method: 'GET', path: '/__sandbox/service', handle: ({ config }) => jsonReply(200, serviceReading(config)) },
	{ method: 'POST', path: '/__sandbox/clock', handle: setClock },
	{ method: 'POST', path: '/__sandbox/keys', handle: addKey },
	{ method: 'GET', path: '/__sandbox/faults', handle: ({ faults }) => jsonReply(200, faults.current) },
	{ method: 'POST', path: '/__sandbox/faults', handle: setFaults },
	{
		method: 'POST',
		path: '/__sandbox/reset',
		handle: (state) => {
			state.reset();
			return jsonReply(200, { reset: true });
		},
	},
];

/** Every request under /__sandbox/: its JSON body checked first, then dispatched by ADMIN_ROUTES. */
export async function handleAdminRequest(state: SandboxState, req: IncomingMessage, res: ServerResponse, url: URL, requestId: string): Promise<void> {
	const path = url.pathname.replace(/\/$/, '');
	const raw = req.method === 'POST' ? await readBody(req, MAX_JSON_BYTES) : Buffer.alloc(0);
	const body = raw === 'too_large' ? undefined : adminBody(raw);
	const found = findRoute(ADMIN_ROUTES, req.method ?? '', path);
	let reply: Reply;
	if (raw === 'too_large') reply = errorReply(413, 'file_too_large', 'The JSON body is too large.');
	else if (!body) reply = errorReply(400, 'invalid_request', 'The body must be a JSON object.');
	else if (!found) reply = errorReply(404, 'not_found', `No admin endpoint ${req.method} ${path}.`);
	else reply = found.route.handle(state, body);
	send(res, reply, requestId);
}
