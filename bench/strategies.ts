/* eslint-disable @n8n/community-nodes/no-restricted-imports -- benchmarks run by people, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOmniVideoClient, type OmniVideoClient } from '../core/client';
import { RateLimitError } from '../core/errors/errors';
import type { Sleep } from '../core/http/transport';
import type { PlanLimits } from '../core/types';
import type { RenderCalibration } from '../core/pacing/renderCalibration';
import { createAxiosTransport } from '../node-host/axiosTransport';
import { mathRandom, realSleep } from '../node-host/runtime';
import type { Sandbox } from '../sandbox';
import type { VirtualTime } from '../test/support/virtualTime';

/** What every strategy hands back: when it knew each job had ended, and what reached the caller. */
export interface StrategyOutcome {
	known: Map<string, number>;
	surfaced429: number;
	failedRows: number;
}

export interface BatchSetup {
	sandbox: Sandbox;
	apiKey: string;
	limits: PlanLimits;
	rows: number;
	/** Virtual time runs this many times faster than real time. */
	speed: number;
	/** Set: the sandbox's clock stands still and moves only when every client sleeps (no real latency in the figures). */
	virtual?: VirtualTime;
}

/** The prompt of row `i`: one job per row, so that a second job for a row is a duplicate. */
export const rowPrompt = (i: number) => `Bench row ${i}: a lighthouse at dusk, waves breaking`;
export const ROW_SIZE = { resolution: '1080P', duration: 8 } as const;

/** A sleep on the sandbox's clock: `ms` virtual milliseconds take `ms / speed` real ones. */
export function sandboxSleep(speed: number): Sleep {
	return (ms, signal) => realSleep(ms / speed, signal);
}

let clients = 0;

/** A core client that reads the sandbox's clock and sleeps on it, as the bench requires. */
export function coreClientOn(setup: BatchSetup): OmniVideoClient {
	const { sandbox, virtual } = setup;
	const transport = createAxiosTransport({ apiKey: setup.apiKey });
	return createOmniVideoClient({
		baseUrl: sandbox.url,
		transport: virtual ? virtual.track(transport) : transport,
		clock: { now: () => sandbox.clock.now() },
		sleep: virtual ? virtual.sleep : sandboxSleep(setup.speed),
		random: mathRandom,
		limits: setup.limits,
		// A limiter of its own per run: the process-wide limiter of an earlier run must not carry over.
		limiterKey: `bench-${++clients}`,
		redact: [setup.apiKey],
	});
}

function rowFailed(outcome: StrategyOutcome, error: unknown): void {
	outcome.failedRows++;
	if (error instanceof RateLimitError) outcome.surfaced429++;
}

/** (a), (b): core creates with a callback URL; a local receiver confirms each callback with core. */
export async function coreCallbacks(setup: BatchSetup, signed: boolean): Promise<StrategyOutcome> {
	const { sandbox } = setup;
	const client = coreClientOn(setup);
	const outcome: StrategyOutcome = { known: new Map(), surfaced429: 0, failedRows: 0 };
	const receiver = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			void client
				.handleCallback({ headers: req.headers, rawBody: Buffer.concat(chunks).toString('utf8'), secret: signed ? sandbox.webhookSecret : undefined })
				.then((answer) => {
					if (answer.accepted) {
						if (!outcome.known.has(answer.job.id)) outcome.known.set(answer.job.id, sandbox.clock.now());
						res.writeHead(200).end();
					} else {
						res.writeHead(answer.status, answer.retryAfterSeconds ? { 'Retry-After': String(answer.retryAfterSeconds) } : {}).end();
					}
				});
		});
	});
	await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
	const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/omni-callback`;
	try {
		const created = await Promise.all(
			Array.from({ length: setup.rows }, (_, i) =>
				client
					.generateVideo({ prompt: rowPrompt(i), ...ROW_SIZE, callbackUrl }, { allowInsecureLoopbackCallback: true, watched: true })
					.then(
						() => true,
						(error: unknown) => {
							rowFailed(outcome, error);
							return false;
						},
					),
			),
		);
		const expected = created.filter(Boolean).length;
		// Every job's callback comes within the sandbox's retry schedule; give up after 2 virtual hours.
		const giveUpAt = sandbox.clock.now() + 2 * 3_600_000;
		while (outcome.known.size < expected && sandbox.clock.now() < giveUpAt) await sandboxSleep(setup.speed)(1_000);
	} finally {
		receiver.closeAllConnections();
		await new Promise((resolve) => receiver.close(resolve));
	}
	return outcome;
}

/**
 * (c): core polling, generateVideo then waitForJob, every row at once. `lookCostShare` moves the
 * schedule along its trade-off (see the trade-off curve); unset, core's default. `calibration`
 * replaces what the key learns (the oracle's known distribution).
 */
export async function corePolling(setup: BatchSetup, lookCostShare?: number, calibration?: RenderCalibration): Promise<StrategyOutcome> {
	const client = coreClientOn(setup);
	// The oracle's (bench/oracle.ts): the distribution known instead of learned.
	if (calibration) client.runtime.calibration = calibration;
	const outcome: StrategyOutcome = { known: new Map(), surfaced429: 0, failedRows: 0 };
	await Promise.all(Array.from({ length: setup.rows }, (_, i) => pollRow(setup, client, i, outcome, lookCostShare)));
	return outcome;
}

/** One row through core: create, then wait by polling; when it knew the job ended goes to `outcome`. */
async function pollRow(setup: BatchSetup, client: OmniVideoClient, i: number, outcome: StrategyOutcome, lookCostShare?: number): Promise<void> {
	try {
		const created = await client.generateVideo({ prompt: rowPrompt(i), ...ROW_SIZE }, { watched: true });
		const job = await client.waitForJob(created.job.id, { expectedMs: created.expectedMs, timeoutMs: 2 * 3_600_000, lookCostShare });
		outcome.known.set(job.id, setup.sandbox.clock.now());
	} catch (error) {
		rowFailed(outcome, error);
	}
}

/**
 * Core polling as n8n queue mode runs it: `executions` executions share the rows, each polling
 * its rows at once, spread in turn over `processes` processes on the same key (each a client with
 * a limiter and calibration of its own, knowing nothing of the others but what the service says).
 * One process and one execution is corePolling.
 */
export async function corePollingOver(setup: BatchSetup, processes: number, executions: number): Promise<StrategyOutcome> {
	const clients = Array.from({ length: processes }, () => coreClientOn(setup));
	const outcome: StrategyOutcome = { known: new Map(), surfaced429: 0, failedRows: 0 };
	const perExecution = Math.ceil(setup.rows / executions);
	await Promise.all(
		Array.from({ length: setup.rows }, (_, i) => pollRow(setup, clients[Math.floor(i / perExecution) % processes], i, outcome)),
	);
	return outcome;
}

/**
 * (e), (f): the loop a user builds without core: create, then GET the job every `everyMs`
 * (virtual) until it ends; a 429 is retried after its Retry-After, anything else is retried after
 * the same interval. No idempotency key, no limiter, no estimate. `atOnce` set, the user's loop
 * runs that many rows at a time (the plan's jobs at once: a create only when a row is done), else
 * every row at once.
 */
export async function naiveLoop(setup: BatchSetup, everyMs: number, atOnce?: number): Promise<StrategyOutcome> {
	const { sandbox } = setup;
	const sleep = sandboxSleep(setup.speed);
	const outcome: StrategyOutcome = { known: new Map(), surfaced429: 0, failedRows: 0 };
	const headers = { Authorization: `Bearer ${setup.apiKey}`, 'Content-Type': 'application/json' };
	const giveUpAt = sandbox.clock.now() + 4 * 3_600_000;
	/** Sends until the answer is not a 429, waiting each Retry-After (virtual seconds here). */
	const send = async (path: string, init: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> => {
		for (;;) {
			const response = await fetch(`${sandbox.url}${path}`, { ...init, headers });
			const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
			if (response.status !== 429) return { status: response.status, body };
			if (sandbox.clock.now() > giveUpAt) throw new RateLimitError('gave up');
			await sleep(Number(response.headers.get('retry-after') ?? '5') * 1_000);
		}
	};
	const row = async (i: number): Promise<void> => {
		try {
			const body = JSON.stringify({ model: 'omni-video', prompt: rowPrompt(i), ...ROW_SIZE });
			const created = await send('/api/v1/generate', { method: 'POST', body });
			if (created.status !== 202) throw new Error(`create answered ${created.status}`);
			const id = String(created.body.id);
			for (;;) {
				await sleep(everyMs);
				const job = await send(`/api/v1/jobs/${encodeURIComponent(id)}`, { method: 'GET' });
				if (job.body.status === 'done' || job.body.status === 'failed') {
					outcome.known.set(id, sandbox.clock.now());
					return;
				}
				if (sandbox.clock.now() > giveUpAt) throw new Error(`job ${id} never ended`);
			}
		} catch (error) {
			rowFailed(outcome, error);
		}
	};
	let nextRow = 0;
	const worker = async (): Promise<void> => {
		while (nextRow < setup.rows) await row(nextRow++);
	};
	await Promise.all(Array.from({ length: Math.min(atOnce ?? setup.rows, setup.rows) }, worker));
	return outcome;
}
