/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test tooling, never shipped */
import { createHash } from 'node:crypto';
import { createOmniVideoClient, type OmniVideoClient } from '../../core/client';
import { PLANS, type PlanLimits } from '../../core/types';
import type { HttpRequest, HttpResponse, SendRequest, Transport } from '../../core/http/transport';
import { TransportFailure, type TransportFailureKind } from '../../core/errors/errors';
import { createAxiosTransport } from '../../node-host/axiosTransport';
import { startSandbox, type Sandbox, type SandboxOptions, type ScenarioName } from '../../sandbox';
import { CheckedHttp } from './checkedHttp';
import { VirtualTime } from './virtualTime';
import type { SharedPlan } from '../../core/pacing/sharedPlan';

/**
 * Core's unit tests run against the real sandbox over HTTP on loopback, on one virtual clock: the
 * sandbox's, standing still until the test's VirtualTime moves it. Each test gets its own sandbox
 * (a fresh clock, job store and windows) with one account on the plan the client is told of.
 */

const KEYS = {
	/** The client's key. */
	main: 'omni_core_main',
	/** Someone else's key on the same account: their jobs take the account's slots. */
	other: 'omni_core_other',
	/** A key whose credit budget covers no job. */
	budget: 'omni_core_budget',
	/** A key whose every request meets a service that is down. */
	down: 'omni_core_down',
	/** A key on an account without credits. */
	broke: 'omni_core_broke',
} as const;

export type CoreKey = Exclude<keyof typeof KEYS, 'other'>;

/** One request as the client handed it to its transport, with what came back. */
export interface SentRequest {
	at: number;
	method: string;
	url: string;
	headers: Record<string, string>;
	body: unknown;
	/** Sent to the API with the key (else to a pre-signed or CDN address, without it). */
	viaApi: boolean;
	response?: HttpResponse;
	failure?: TransportFailureKind;
}

export class SentLog {
	readonly requests: SentRequest[] = [];

	api(): SentRequest[] {
		return this.requests.filter((r) => r.viaApi);
	}

	creates(): SentRequest[] {
		return this.api().filter((r) => r.method === 'POST' && r.url.endsWith('/api/v1/generate'));
	}

	lookups(): SentRequest[] {
		return this.api().filter((r) => r.method === 'GET');
	}

	/** Wraps a transport so that every request through it is logged, at the virtual time it was sent. */
	recording(transport: Transport, time: VirtualTime): Transport {
		const record =
			(send: SendRequest, viaApi: boolean): SendRequest =>
			(request) => {
				const sent: SentRequest = {
					at: time.clock.now(),
					method: request.method,
					url: request.url,
					headers: { ...request.headers },
					body: request.body,
					viaApi,
				};
				this.requests.push(sent);
				const answer = send(request);
				answer.then(
					(response) => (sent.response = response),
					(error: unknown) => (sent.failure = error instanceof TransportFailure ? error.failure : undefined),
				);
				return answer;
			};
		return { api: record(transport.api, true), plain: record(transport.plain, false) };
	}
}

export interface CoreSandboxOptions {
	/** The plan of the account, which the client is told of too. */
	limits?: PlanLimits;
	/** Which of the account's keys the client uses. */
	key?: CoreKey;
	/** Sandbox settings for scenarios (holdMs, slowMs) and the service's reading (else OMNI_SANDBOX_SERVICE's). */
	sandbox?: Pick<SandboxOptions, 'holdMs' | 'slowMs' | 'service' | 'idempotencyKeys' | 'retryAfter' | 'rateLimitHeaders' | 'distinctLimitCodes'>;
	/** Wraps the transport between the client and the sandbox, to watch or break requests on their way. */
	wrapTransport?: (transport: Transport, time: VirtualTime) => Transport;
	/** The plan's record the client and its restarted() processes share (see SharedPlan). */
	sharedPlan?: SharedPlan;
}

export interface CoreSandbox {
	sandbox: Sandbox;
	time: VirtualTime;
	client: OmniVideoClient;
	/** What the client sent. */
	sent: SentLog;
	/** What others do on the same key and account meanwhile. */
	others: Others;
	/** The client's process after a restart: same key and log, nothing kept in memory (limiter, jobs made). */
	restarted(): OmniVideoClient;
}

const open: Sandbox[] = [];
let counter = 0;

/** A core client on the sandbox's virtual clock against a sandbox of its own. */
export async function coreSandbox(options: CoreSandboxOptions = {}): Promise<CoreSandbox> {
	const limits = options.limits ?? PLANS.pro;
	const sandbox = await startSandbox({
		port: 0,
		speed: 0,
		clientClock: 'sandbox',
		// Every job renders in the sandbox's typical time for its size, which tests can state.
		renderTimes: { seed: 1, spread: 0 },
		...options.sandbox,
		accounts: [
			{ id: 'acct_core', plan: limits, balance: 1_000_000_000, userId: 'user_core' },
			{ id: 'acct_broke', plan: limits, balance: 0, userId: 'user_broke' },
		],
		keys: [
			{ key: KEYS.main, account: 'acct_core', label: 'main' },
			{ key: KEYS.other, account: 'acct_core', label: 'other' },
			{ key: KEYS.budget, account: 'acct_core', label: 'budget', budget: 10 },
			{ key: KEYS.down, account: 'acct_core', label: 'down', scenarios: ['service-unavailable'] },
			{ key: KEYS.broke, account: 'acct_broke', label: 'broke' },
		],
	});
	open.push(sandbox);
	const time = new VirtualTime(sandbox.clock);
	const apiKey = KEYS[options.key ?? 'main'];
	const sent = new SentLog();
	const wrap = options.wrapTransport ?? ((transport) => transport);
	const recorded = (transport: Transport) => sent.recording(wrap(transport, time), time);
	const client = clientOn(sandbox, time, apiKey, limits, recorded, options.sharedPlan);
	return { sandbox, time, client, sent, others: new Others(sandbox, time, apiKey, limits), restarted: () => clientOn(sandbox, time, apiKey, limits, recorded, options.sharedPlan) };
}

/** Closes every sandbox the tests of a file started: `afterEach(closeCoreSandboxes)`. */
export async function closeCoreSandboxes(): Promise<void> {
	await Promise.all(open.splice(0).map((sandbox) => sandbox.close()));
}

function clientOn(
	sandbox: Sandbox,
	time: VirtualTime,
	apiKey: string,
	limits: PlanLimits,
	wrap: (transport: Transport) => Transport = (transport) => transport,
	sharedPlan?: SharedPlan,
): OmniVideoClient {
	const process = ++counter;
	return createOmniVideoClient({
		baseUrl: sandbox.url,
		transport: wrap(time.track(createAxiosTransport({ apiKey }))),
		clock: time.clock,
		sleep: time.sleep,
		random: seededRandom(process),
		limits,
		limiterKey: `core-test-${process}`,
		redact: [apiKey],
		sharedPlan: sharedPlan && { plan: sharedPlan, holderId: `process-${process}` },
	});
}

/**
 * Randomness that is the same on every run yet never repeats (hashes of a counter): the sandbox
 * keeps idempotency keys, so the keys core draws from it must differ as real random ones do.
 */
function seededRandom(seed: number): () => number {
	let n = 0;
	return () => createHash('sha256').update(`${seed}:${++n}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** Requests others make while the client works: in flight for the virtual clock, counted by the sandbox. */
export class Others {
	constructor(
		private readonly sandbox: Sandbox,
		private readonly time: VirtualTime,
		private readonly apiKey: string,
		private readonly limits: PlanLimits,
	) {}

	/** `count` lookups on the client's key (another process sharing it): they take its rate windows. */
	async lookups(count: number): Promise<void> {
		const http = new CheckedHttp(this.sandbox.url, this.apiKey, this.sandbox.service.switches);
		for (let i = 0; i < count; i++) await this.time.during(http.job('job_elsewhere'));
	}

	/** `count` jobs created with another key on the account: they take its jobs-at-once slots. */
	async creates(count: number): Promise<void> {
		const http = new CheckedHttp(this.sandbox.url, KEYS.other, this.sandbox.service.switches);
		for (let i = 0; i < count; i++) {
			const answer = await this.time.during(http.generate({ prompt: 'someone else', resolution: '1080P', duration: 8 }));
			if (answer.status !== 202) throw new Error(`someone else's create was answered ${answer.status}`);
		}
	}

	/** Another core client on the client's key, with a limiter of its own (another process). */
	client(): OmniVideoClient {
		return clientOn(this.sandbox, this.time, this.apiKey, this.limits);
	}
}

/** The most jobs the sandbox had running at once on the account. */
export function mostJobsAtOnce(sandbox: Sandbox): number {
	const jobs = [...sandbox.jobs.all.values()];
	return Math.max(0, ...jobs.map((job) => jobs.filter((other) => other.createdAt <= job.createdAt && job.createdAt < other.endsAt).length));
}

/** How long the sandbox renders a job, creation to end. */
export function renderMs(sandbox: Sandbox, jobId: string): number {
	const job = sandbox.jobs.all.get(jobId);
	if (!job) throw new Error(`the sandbox has no job ${jobId}`);
	return job.endsAt - job.createdAt;
}

/** The requests the sandbox refused with 429, by its journal. */
export function refused429(sandbox: Sandbox) {
	return sandbox.journal.filter((entry) => entry.status === 429);
}

/** Resolves once the sandbox's journal has an entry matching (real time: for races set up on purpose). */
export async function untilJournalHas(sandbox: Sandbox, match: (entry: Sandbox['journal'][number]) => boolean): Promise<void> {
	for (let i = 0; i < 500 && !sandbox.journal.some(match); i++) await new Promise((resolve) => setTimeout(resolve, 2));
	if (!sandbox.journal.some(match)) throw new Error('the sandbox never saw the request');
}

/** What happens to one API request on its way. */
export type Fault =
	/** The sandbox answers with this scenario (X-Sandbox-Scenario). */
	| { scenario: ScenarioName }
	/** The sandbox handles the request, but its answer never reaches the client. */
	| { answerLost: TransportFailureKind }
	/** The request never reaches the sandbox. */
	| { notSent: TransportFailureKind };

/** Breaks the API requests that `applies` picks, one fault each, in order; the rest pass untouched. */
export function withFaults(faults: Fault[], applies: (request: HttpRequest) => boolean = () => true): (transport: Transport) => Transport {
	const pending = [...faults];
	return (transport) => ({
		...transport,
		api: async (request) => {
			const fault = applies(request) ? pending.shift() : undefined;
			if (!fault) return transport.api(request);
			if ('notSent' in fault) throw new TransportFailure(fault.notSent, `injected: ${fault.notSent} before the request left`);
			if ('scenario' in fault) return transport.api({ ...request, headers: { ...request.headers, 'X-Sandbox-Scenario': fault.scenario } });
			await transport.api(request);
			throw new TransportFailure(fault.answerLost, `injected: ${fault.answerLost} after the sandbox answered`);
		},
	});
}

/** The most requests found in any window of `windowMs` among the given request times. */
export function maxInAnyWindow(times: number[], windowMs: number): number {
	const sorted = [...times].sort((a, b) => a - b);
	let best = 0;
	let start = 0;
	for (let end = 0; end < sorted.length; end++) {
		while (sorted[end] - sorted[start] >= windowMs) start++;
		best = Math.max(best, end - start + 1);
	}
	return best;
}
