/* eslint-disable @n8n/community-nodes/no-restricted-globals -- end-to-end tooling, never shipped */
/** What a scenario works with: the n8n server, the sandbox, credentials, and small helpers. */
import type { Sandbox, JournalEntry } from '../../sandbox';
import type { Execution, N8nServer } from './n8nServer';
import { waitUntil } from './processes';
import type { ExampleWorkflow } from './instance';
import type { Credential, WorkflowJson } from './workflows';
import { PLANS, type PlanName } from '../../core/types';

export interface Context {
	version: string;
	/** The n8n that scenarios talk to (in queue mode: main). */
	n8n: N8nServer;
	/** Where production webhooks are sent (main, or the webhook processor in queue mode). */
	webhookUrl: string;
	/**
	 * In queue mode, each webhook process's own address behind the balancer: a webhook is live once
	 * every one of them has it (each learns of an activation on its own).
	 */
	webhookProcesses?: string[];
	sandbox: Sandbox;
	/** A second key of the Pro account, for jobs the scenarios create themselves (its own rate window). */
	directKey: string;
	speed: number;
	credentials: {
		/** Pro key, limits scaled to the sandbox's speed, with the signing secret. */
		signed: Credential;
		/** The same without a signing secret: callbacks are confirmed by a lookup. */
		lookup: Credential;
		/** Pro key at Pro's real limits, no secret: the node paces itself as on a real Pro key. */
		pro: Credential;
		revoked: Credential;
	};
	/** A PNG served on loopback, for the image scenarios. */
	pngUrl: string;
	png: Buffer;
	/** The example workflows as imported. */
	examples: ExampleWorkflow[];
}

/** The API requests (not CDN or uploads' PUT) the sandbox received since `from`. */
export function apiRequestsSince(sandbox: Sandbox, from: number): JournalEntry[] {
	return sandbox.journal.slice(from).filter((entry) => entry.path.startsWith('/api/'));
}

/** "3 requests (1 create, 2 lookups)" and the like. */
export function describeRequests(entries: JournalEntry[]): string {
	const creates = entries.filter((entry) => entry.path === '/api/v1/generate').length;
	const lookups = entries.filter((entry) => entry.path.startsWith('/api/v1/jobs/')).length;
	const uploads = entries.filter((entry) => entry.path === '/api/upload').length;
	const limited = entries.filter((entry) => entry.status === 429).length;
	const parts = [`${creates} create${creates === 1 ? '' : 's'}`, `${lookups} lookup${lookups === 1 ? '' : 's'}`];
	if (uploads) parts.push(`${uploads} upload${uploads === 1 ? '' : 's'}`);
	parts.push(`${limited} × 429`);
	return `${entries.length} API requests (${parts.join(', ')})`;
}

export async function createActiveWorkflow(context: Context, workflow: WorkflowJson): Promise<string> {
	const id = await context.n8n.createWorkflow(workflow);
	await context.n8n.activate(id);
	await webhooksLive(context, workflow);
	return id;
}

/** The production webhook paths a workflow's trigger nodes listen on. */
function webhookPaths(workflow: WorkflowJson): string[] {
	return workflow.nodes.flatMap((node) => {
		if (node.type === 'n8n-nodes-base.webhook') return [String(node.parameters.path)];
		if (node.type.endsWith('.omniVideoTrigger') && node.webhookId) return [`${node.webhookId}/omni-video`];
		return [];
	});
}

/**
 * Waits until each of the workflow's production webhooks is registered. From n8n 2.x's workflow
 * publication service (on by default in 2.41) activation only queues the publication, and the
 * webhooks go live a moment after the API answered. A CORS preflight (OPTIONS with an Origin) asks
 * n8n for the path's methods without starting an execution: answered 204 once the path is registered.
 */
async function webhooksLive(context: Context, workflow: WorkflowJson): Promise<void> {
	// Asked of each webhook process, not the balancer: one that answered through it said nothing of
	// the other, which refused the check's POST a moment later (404 "not registered", seen in queue mode).
	for (const base of context.webhookProcesses ?? [context.webhookUrl]) {
		for (const path of webhookPaths(workflow)) {
			await waitUntil(
				`webhook ${path} registered at ${base}`,
				async () => {
					const response = await fetch(`${base}/webhook/${path}`, { method: 'OPTIONS', headers: { origin: context.webhookUrl, 'access-control-request-method': 'POST' } });
					await response.arrayBuffer();
					// Unregistered: 404 without the method asked for, 500 with it (2.41); registered: 204.
					return response.ok;
				},
				30_000,
				100,
			);
		}
	}
}

/** POSTs `rows` to a Webhook node's production URL. */
export async function postRows(context: Context, path: string, rows: Array<Record<string, unknown>>): Promise<void> {
	const response = await fetch(`${context.webhookUrl}/webhook/${path}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ rows }),
	});
	if (!response.ok) throw new Error(`webhook ${path}: ${response.status} ${await response.text()}`);
}

/** Waits until the workflow has an execution whose status is one of `statuses`; returns it with its data. */
export async function executionWith(context: Context, workflowId: string, statuses: string[], timeoutMs: number, exceptIds: string[] = []): Promise<Execution> {
	let found: Execution | undefined;
	await waitUntil(
		`an execution of workflow ${workflowId} with status ${statuses.join(' or ')}`,
		async () => {
			// The editor's list shows every status (the public API leaves out running and waiting ones).
			const filter = encodeURIComponent(JSON.stringify({ workflowId }));
			const list = await context.n8n.rest<{ results: Execution[] }>('GET', `/executions?filter=${filter}&limit=50`);
			found = list.results.find((execution) => statuses.includes(execution.status) && !exceptIds.includes(execution.id));
			return found !== undefined;
		},
		timeoutMs,
		300,
	);
	return context.n8n.execution(found!.id);
}

/** Every execution of a workflow (without data). */
export async function executionsOf(context: Context, workflowId: string): Promise<Execution[]> {
	return (await context.n8n.api<{ data: Execution[] }>('GET', `/executions?workflowId=${workflowId}&limit=250`)).data;
}

/** The output items of `nodeName` in an execution. */
export function outputOf(execution: Execution, nodeName: string) {
	const runs = execution.data?.resultData.runData[nodeName] ?? [];
	return runs[runs.length - 1]?.data?.main[0] ?? [];
}

export function errorOf(execution: Execution, nodeName: string) {
	const runs = execution.data?.resultData.runData[nodeName] ?? [];
	return runs[runs.length - 1]?.error ?? execution.data?.resultData.error;
}

export function seconds(ms: number): string {
	return `${(ms / 1000).toFixed(1)} s`;
}

/** Throws unless the execution succeeded, with the first error of `nodes` in the message. */
export function checkSucceeded(execution: Execution, ...nodes: string[]): void {
	const error = nodes.map((node) => errorOf(execution, node)).find((found) => found !== undefined);
	check(execution.status === 'success', `execution ${execution.id} ended ${execution.status}: ${error?.message ?? 'no error recorded'}`);
}

/** Throws with `message` unless `condition` holds: scenarios check behaviour, and say what differed. */
export function check(condition: unknown, message: string): asserts condition {
	if (!condition) throw new Error(message);
}

export function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A credential on a key of its own on the account of `plan` (Pro unless given), with the signing
 * secret when `signed`. On a sandbox whose clients keep its clock (`clientClock: 'sandbox'`: the
 * node follows it) the plan is the plan itself; otherwise its limits are scaled to `speed` (the
 * sandbox's speed while it is used), since the node counts real minutes. The node's limiter and
 * the service's rate windows are per key: a batch on it neither waits on the requests the
 * earlier checks spent nor spends those of the checks after it. Concurrency stays the account's.
 */
export async function credentialOnOwnKey(context: Context, label: string, options: { speed: number; signed: boolean; plan?: PlanName }): Promise<Credential> {
	const stamp = Date.now().toString(36);
	const apiKey = `omni_test_e2e_${label}_${stamp}`;
	const plan = options.plan ?? 'pro';
	const added = await fetch(`${context.sandbox.url}/__sandbox/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: apiKey, account: `acct_${plan}`, label: `e2e-${label}` }) });
	if (!added.ok) throw new Error(`the sandbox did not add a key for ${label}: ${added.status}`);
	const name = `e2e ${label} ${stamp}`;
	const limits = context.sandbox.config.clientClock === 'sandbox'
		? { plan }
		: {
				plan: 'custom',
				requestsPerMinute: PLANS[plan].requestsPerMinute * options.speed,
				requestsPerHour: PLANS[plan].requestsPerHour * options.speed,
				concurrentJobs: PLANS[plan].concurrentJobs,
			};
	const id = await context.n8n.createCredential(name, {
		apiKey,
		baseUrl: context.sandbox.url,
		...limits,
		...(options.signed ? { webhookSecret: context.sandbox.webhookSecret } : {}),
		allowedHttpRequestDomains: 'all',
	});
	return { id, name };
}
