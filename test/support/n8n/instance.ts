/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test harness, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExecutionLifecycleHooks, WebhookContext } from 'n8n-core';
import {
	NodeHelpers,
	createRunExecutionData,
	type ICredentialDataDecryptedObject,
	type IDataObject,
	type INode,
	type INodeExecutionData,
	type IRun,
	type IRunExecutionData,
	type IWebhookData,
	type IWebhookDescription,
	type IWebhookResponseData,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
	type WorkflowExecuteMode,
} from 'n8n-workflow';
import {
	PACKAGE_NAME,
	TestCredentialsHelper,
	loadPackage,
	makeAdditionalData,
	makeWorkflow,
	processExecution,
	shutdownEngine,
	startAt,
	type EngineContext,
} from './engine';

export const OMNI_VIDEO = `${PACKAGE_NAME}.omniVideo`;
export const OMNI_VIDEO_TRIGGER = `${PACKAGE_NAME}.omniVideoTrigger`;

type ExecutionStatus = 'running' | 'waiting' | 'success' | 'error';

export interface Execution {
	id: string;
	workflow: IWorkflowBase;
	mode: WorkflowExecuteMode;
	status: ExecutionStatus;
	/** The latest run: the parked one while waiting, the final one when finished. */
	run?: IRun;
	/** Resolves when the execution has finished (after any number of resumes). */
	finished: Promise<IRun>;
}

interface ExecutionRecord extends Execution {
	resolveFinished: (run: IRun) => void;
}

/** An express-like request/response: what WebhookContext and the nodes read and write. */
interface WebhookRequest extends http.IncomingMessage {
	rawBody: Buffer;
	body: unknown;
	query: Record<string, string>;
	params: Record<string, string>;
}

interface WebhookResponse extends http.ServerResponse {
	status(code: number): WebhookResponse;
	json(body: unknown): WebhookResponse;
}

/** One answer n8n gave to a webhook call, for assertions. */
export interface WebhookCall {
	path: string;
	/** The request as received, to replay it. */
	requestHeaders: Record<string, string>;
	requestBody: string;
	status: number;
	body: string;
	/** The execution the call started or resumed, if any. */
	executionId?: string;
}

/**
 * A small n8n instance for tests: n8n's own engine (WorkflowExecute, WebhookContext) behind a
 * loopback HTTP server with n8n's two webhook routes. `/webhook-waiting/:executionId` resumes a
 * parked execution as WaitingWebhooks does (404 unknown, 409 running or finished), and
 * `/webhook/:webhookId/:path` starts the active workflow whose trigger owns that path, as
 * LiveWebhooks does. Executions live in memory, where n8n keeps them in its database.
 */
export class N8nTestInstance {
	readonly executions = new Map<string, ExecutionRecord>();
	readonly webhookCalls: WebhookCall[] = [];
	private readonly active: IWorkflowBase[] = [];
	private nextExecutionId = 1;

	private constructor(
		private readonly engine: EngineContext,
		private readonly server: http.Server,
	) {}

	static async start(credentials: Record<string, ICredentialDataDecryptedObject>): Promise<N8nTestInstance> {
		const pkg = await loadPackage();
		const server = http.createServer();
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
		const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		const engine: EngineContext = {
			pkg,
			credentialsHelper: new TestCredentialsHelper(pkg.credentialTypes, credentials),
			urls: { baseUrl },
		};
		const instance = new N8nTestInstance(engine, server);
		server.on('request', (req, res) => void instance.route(req, res));
		return instance;
	}

	get baseUrl(): string {
		return this.engine.urls.baseUrl;
	}

	get credentials(): Record<string, ICredentialDataDecryptedObject> {
		return this.engine.credentialsHelper.byType;
	}

	async stop(): Promise<void> {
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
		shutdownEngine();
	}

	/** Runs a workflow from `startNode` with the given items, like a manual or scheduled run. */
	async execute(
		workflow: IWorkflowBase,
		startNode: string,
		items: INodeExecutionData[] = [{ json: {} }],
		mode: WorkflowExecuteMode = 'manual',
	): Promise<Execution> {
		const execution = this.newExecution(workflow, mode);
		await this.run(execution, startAt(workflow, startNode, items));
		return execution;
	}

	/** Executions started by this workflow's trigger. */
	executionsOf(workflow: IWorkflowBase): Execution[] {
		return [...this.executions.values()].filter((execution) => execution.workflow === workflow);
	}

	/** Makes a workflow's trigger webhooks live, as activating it does. */
	activate(workflow: IWorkflowBase): void {
		workflow.active = true;
		this.active.push(workflow);
	}

	/** The production URL of a trigger node's webhook, as the editor shows it. */
	productionUrl(workflow: IWorkflowBase, nodeName: string): string {
		const { node, description } = this.webhookOf(workflow, nodeName, false);
		return `${this.baseUrl}/webhook/${this.webhookPath(workflow, node, description)}`;
	}

	private newExecution(workflow: IWorkflowBase, mode: WorkflowExecuteMode): ExecutionRecord {
		let resolveFinished: (run: IRun) => void = () => {};
		const finished = new Promise<IRun>((resolve) => (resolveFinished = resolve));
		const execution: ExecutionRecord = {
			id: String(this.nextExecutionId++),
			workflow,
			mode,
			status: 'running',
			finished,
			resolveFinished,
		};
		this.executions.set(execution.id, execution);
		return execution;
	}

	private async run(
		execution: ExecutionRecord,
		data: IRunExecutionData,
		extra: Partial<IWorkflowExecuteAdditionalData> = {},
	): Promise<void> {
		execution.status = 'running';
		const run = await processExecution(this.engine, execution.workflow, execution.id, execution.mode, data, extra);
		execution.run = run;
		if (run.waitTill) {
			// n8n stores the parked execution now; only from here on do resume calls find it. Its
			// custom data goes to the execution_metadata table, which keeps 10 keys of 512 characters.
			storedAsN8nDoes(run.data.resultData);
			execution.status = 'waiting';
			return;
		}
		execution.status = run.status === 'success' ? 'success' : 'error';
		execution.resolveFinished(run);
	}

	private async route(rawReq: http.IncomingMessage, rawRes: http.ServerResponse): Promise<void> {
		const { req, res } = await expressLike(rawReq, rawRes);
		const path = new URL(req.url ?? '/', this.baseUrl).pathname;
		const requestHeaders: Record<string, string> = {};
		for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) requestHeaders[name] = String(value);
		const call: WebhookCall = { path, requestHeaders, requestBody: req.rawBody.toString('utf8'), status: 0, body: '' };
		this.webhookCalls.push(call);
		const originalEnd = res.end.bind(res);
		res.end = ((chunk?: unknown) => {
			call.status = res.statusCode;
			call.body = chunk === undefined ? '' : String(chunk);
			return originalEnd(chunk as string);
		}) as typeof res.end;
		try {
			const waiting = /^\/webhook-waiting\/([^/]+)\/?(.*)$/.exec(path);
			const live = /^\/webhook\/(.+)$/.exec(path);
			if (waiting) await this.resume(waiting[1], waiting[2], req, res, call);
			else if (live) await this.startFromTrigger(live[1], req, res, call);
			else res.status(404).json({ message: 'Not found' });
		} catch (error) {
			if (!res.headersSent) res.status(500).json({ message: error instanceof Error ? error.message : String(error) });
		}
	}

	/** WaitingWebhooks.executeWebhook and the run that follows (WorkflowRunner). */
	private async resume(executionId: string, suffix: string, req: WebhookRequest, res: WebhookResponse, call: WebhookCall): Promise<void> {
		const execution = this.executions.get(executionId);
		if (!execution) return void res.status(404).json({ message: `The execution "${executionId}" does not exist.` });
		if (execution.status === 'running') return void res.status(409).json({ message: `The execution "${executionId}" is running already.` });
		if (execution.status !== 'waiting') return void res.status(409).json({ message: `The execution "${executionId}" has finished already.` });

		// What n8n reads back from its database, then prepares for the resume.
		const data = structuredClone(execution.run!.data);
		const lastNode = data.resultData.lastNodeExecuted!;
		data.executionData!.nodeExecutionStack[0].node.disabled = true;
		data.waitTill = undefined;
		data.resultData.runData[lastNode].pop();

		const workflow = makeWorkflow(this.engine.pkg, execution.workflow);
		const node = workflow.getNode(lastNode)!;
		const { description } = this.webhookOf(execution.workflow, lastNode, true, req.method ?? 'POST', suffix);
		const hooks = new ExecutionLifecycleHooks(execution.mode, execution.id, execution.workflow);
		const extra = { httpRequest: req, httpResponse: res } as unknown as Partial<IWorkflowExecuteAdditionalData>;
		const additionalData = makeAdditionalData(this.engine, execution.id, hooks, extra);
		const result = await runWebhook(workflow, node, description, additionalData, execution.mode, data);
		answerIfSilent(res, result);
		if (result.workflowData === undefined) return;
		call.executionId = execution.id;
		// WebhookHelpers.prepareExecutionData: the webhook's items replace the waiting node's input.
		data.executionData!.nodeExecutionStack[0].data.main = result.workflowData;
		await this.run(execution, data, extra);
	}

	/** LiveWebhooks: the active workflow whose trigger owns the path starts a new execution. */
	private async startFromTrigger(path: string, req: WebhookRequest, res: WebhookResponse, call: WebhookCall): Promise<void> {
		for (const workflowData of this.active) {
			for (const node of workflowData.nodes) {
				const type = this.engine.pkg.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
				for (const description of type.description.webhooks ?? []) {
					if (description.restartWebhook || this.webhookPath(workflowData, node, description) !== path) continue;
					const execution = this.newExecution(workflowData, 'webhook');
					// Like LiveWebhooks: each call builds the workflow from the stored row (its own copy of
					// the static data) and saves the static data back once webhook() has run, so two
					// calls at once each read what was stored before either of them.
					const stored = JSON.parse(JSON.stringify(workflowData.staticData ?? {})) as IDataObject;
					const workflow = makeWorkflow(this.engine.pkg, { ...workflowData, staticData: stored });
					const hooks = new ExecutionLifecycleHooks('webhook', execution.id, workflowData);
					const extra = { httpRequest: req, httpResponse: res } as unknown as Partial<IWorkflowExecuteAdditionalData>;
					const additionalData = makeAdditionalData(this.engine, execution.id, hooks, extra);
					const result = await runWebhook(workflow, workflow.getNode(node.name)!, description, additionalData, 'webhook', null);
					if (workflow.staticData.__dataChanged === true) {
						const saved = JSON.parse(JSON.stringify(workflow.staticData)) as IDataObject;
						delete saved.__dataChanged;
						workflowData.staticData = saved;
					}
					answerIfSilent(res, result);
					if (result.workflowData === undefined) {
						this.executions.delete(execution.id);
						return;
					}
					call.executionId = execution.id;
					const data = createRunExecutionData({
						executionData: { nodeExecutionStack: [{ node, data: { main: result.workflowData }, source: null }] },
					});
					await this.run(execution, data, extra);
					return;
				}
			}
		}
		res.status(404).json({ message: 'The requested webhook is not registered.' });
	}

	private webhookOf(
		workflowData: IWorkflowBase,
		nodeName: string,
		restart: boolean,
		method = 'POST',
		suffix = '',
	): { node: INode; description: IWebhookDescription } {
		const node = workflowData.nodes.find((candidate) => candidate.name === nodeName);
		if (!node) throw new Error(`No node ${nodeName}`);
		const type = this.engine.pkg.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
		const description = (type.description.webhooks ?? []).find(
			(candidate) =>
				Boolean(candidate.restartWebhook) === restart &&
				String(candidate.httpMethod) === method &&
				(!restart || String(candidate.path) === suffix),
		);
		if (!description) throw new Error(`Node ${nodeName} has no matching ${restart ? 'restart ' : ''}webhook`);
		return { node, description };
	}

	private webhookPath(workflowData: IWorkflowBase, node: INode, description: IWebhookDescription): string {
		return NodeHelpers.getNodeWebhookPath(workflowData.id, node, String(description.path).replace(/^\/+|\/+$/g, ''), false, false);
	}
}

/** ExecutionMetadataService: at most 10 custom data keys, each value cut at 512 characters. */
function storedAsN8nDoes(resultData: IRunExecutionData['resultData']): void {
	if (!resultData.metadata) return;
	const kept = Object.entries(resultData.metadata).slice(0, 10);
	resultData.metadata = Object.fromEntries(kept.map(([key, value]) => [key, String(value).slice(0, 512)]));
}

/** WebhookService.runWebhook: the node's webhook() with a WebhookContext, as n8n calls it. */
async function runWebhook(
	workflow: ReturnType<typeof makeWorkflow>,
	node: INode,
	description: IWebhookDescription,
	additionalData: IWorkflowExecuteAdditionalData,
	mode: WorkflowExecuteMode,
	runExecutionData: IRunExecutionData | null,
): Promise<IWebhookResponseData> {
	const type = workflow.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
	const webhookData = {
		httpMethod: description.httpMethod,
		node: node.name,
		path: String(description.path),
		webhookDescription: description,
		workflowId: workflow.id,
		workflowExecuteAdditionalData: additionalData,
	} as IWebhookData;
	const closeFunctions: Array<() => Promise<void>> = [];
	const context = new WebhookContext(workflow, node, additionalData, mode, webhookData, closeFunctions, runExecutionData);
	try {
		return await type.webhook!.call(context);
	} finally {
		await Promise.allSettled(closeFunctions.map(async (close) => await close()));
	}
}

/** WebhookHelpers for responseMode "onReceived": answer unless the node already did. */
function answerIfSilent(res: WebhookResponse, result: IWebhookResponseData): void {
	if (result.noWebhookResponse || res.headersSent) return;
	res.status(200).json(result.webhookResponse ?? { message: 'Workflow was started' });
}

async function expressLike(
	rawReq: http.IncomingMessage,
	rawRes: http.ServerResponse,
): Promise<{ req: WebhookRequest; res: WebhookResponse }> {
	const chunks: Buffer[] = [];
	for await (const chunk of rawReq) chunks.push(chunk as Buffer);
	const req = rawReq as WebhookRequest;
	req.rawBody = Buffer.concat(chunks);
	const url = new URL(req.url ?? '/', 'http://127.0.0.1');
	req.query = Object.fromEntries(url.searchParams);
	req.params = {};
	const isJson = (req.headers['content-type'] ?? '').includes('json');
	try {
		req.body = isJson && req.rawBody.length > 0 ? JSON.parse(req.rawBody.toString('utf8')) : {};
	} catch {
		req.body = {};
	}
	const res = rawRes as WebhookResponse;
	res.status = (code) => {
		res.statusCode = code;
		return res;
	};
	res.json = (body) => {
		if (!res.headersSent) res.setHeader('content-type', 'application/json');
		res.end(JSON.stringify(body));
		return res;
	};
	return { req, res };
}
