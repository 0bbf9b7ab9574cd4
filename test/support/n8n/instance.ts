/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- test harness, never shipped */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExecutionLifecycleHooks } from 'n8n-core';
import {
	createRunExecutionData,
	type ICredentialDataDecryptedObject,
	type IDataObject,
	type INodeExecutionData,
	type IRun,
	type IRunExecutionData,
	type IWebhookDescription,
	type IWebhookResponseData,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
	type Workflow,
	type WorkflowExecuteMode,
} from 'n8n-workflow';
import {
	PACKAGE_NAME,
	loadPackage,
	makeAdditionalData,
	makeWorkflow,
	processExecution,
	shutdownEngine,
	startAt,
	type EngineContext,
	type LoadedPackage,
} from './engine';
import { TestCredentialsHelper } from './credentialsHelper';
import { continueWith, resumeDataOf, storedAsN8nDoes } from './parking';
import { resumeTokenCheck } from './resumeToken';
import { saveStaticData, withStoredStaticData } from './staticData';
import {
	answerIfSilent,
	expressLike,
	recordCall,
	type WebhookCall,
	type WebhookRequest,
	type WebhookResponse,
} from './webhookHttp';
import { runWebhook, webhookOf, webhookPath } from './webhooks';

export type { WebhookCall } from './webhookHttp';

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
	/**
	 * The static data the execution's own copy of the workflow holds (execution_data.workflowData):
	 * the workflow's as the execution was made. In queue mode only a step woken by wait time runs on
	 * it, and only such a step changes it (see `waitTracker.queueMode`).
	 */
	workflowCopyStaticData: IDataObject;
	/**
	 * The execution's resume token (n8n 2.14+: n8n-workflow's createRunExecutionData makes one, and
	 * every step's run data keeps it); undefined on older n8n, whose run data has none.
	 */
	resumeToken?: string;
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
	/** The processes that take calls to waiting executions in turn (see addWebhookProcess). */
	private readonly webhookProcesses: LoadedPackage[] = [];
	private nextWebhookProcess = 0;

	private constructor(
		private readonly engine: EngineContext,
		private readonly server: http.Server,
	) {}

	/**
	 * `webhookUrl` is the address n8n gives nodes for itself (n8n's WEBHOOK_URL: resume and webhook
	 * URLs start with it); by default, where this instance listens.
	 */
	static async start(credentials: Record<string, ICredentialDataDecryptedObject>, options: { webhookUrl?: string } = {}): Promise<N8nTestInstance> {
		const pkg = await loadPackage();
		const server = http.createServer();
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
		const baseUrl = options.webhookUrl ?? `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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

	/** Where this n8n listens, whatever address it gives nodes for itself (`webhookUrl` may go nowhere). */
	get listeningUrl(): string {
		return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
	}

	get credentials(): Record<string, ICredentialDataDecryptedObject> {
		return this.engine.credentialsHelper.byType;
	}

	/**
	 * n8n restarted, or another process of a queue-mode setup takes the calls: the package is loaded
	 * again, so that nothing the node kept in memory remains, while the executions stay (n8n keeps
	 * them in its database). Under Jest, call jest.resetModules() first: loading then makes new
	 * module instances instead of returning the cached ones.
	 */
	async reloadPackage(): Promise<void> {
		this.engine.pkg = await loadPackage();
	}

	/**
	 * Queue mode with several webhook processors behind a load balancer: from now on, calls to
	 * waiting executions go in turn to the package as loaded so far and to one loaded again (under
	 * Jest, call jest.resetModules() first), each with its own memory.
	 */
	async addWebhookProcess(): Promise<void> {
		if (this.webhookProcesses.length === 0) this.webhookProcesses.push(this.engine.pkg);
		this.webhookProcesses.push(await loadPackage());
	}

	/** Back to one process taking every call (the package as loaded last). */
	singleWebhookProcess(): void {
		this.webhookProcesses.length = 0;
	}

	async stop(): Promise<void> {
		for (const timer of this.wakeTimers) clearTimeout(timer);
		this.server.closeAllConnections();
		await new Promise<void>((resolve) => this.server.close(() => resolve()));
		shutdownEngine();
	}

	/**
	 * `$execution.resumeUrl` as n8n-core hands it to the execution's nodes (getAdditionalKeys):
	 * `<webhookWaitingBaseUrl>/<id>`, and from n8n 2.14, whose run data carries a resume token,
	 * `?signature=<token>`, without which WaitingWebhooks refuses the call (401). `origin`: where the
	 * call goes (listeningUrl when the webhook URL n8n gives out goes nowhere).
	 */
	resumeUrlOf(executionId: string, origin = this.baseUrl): string {
		const token = this.resumeTokenOf(executionId);
		return `${origin}/webhook-waiting/${executionId}${token === undefined ? '' : `?signature=${token}`}`;
	}

	/**
	 * The URL a Wait for Callback job of this execution calls back for row `row`: the resume URL
	 * with the node's own webhook path (`omni-video`) after it and the row in its query, the
	 * resume token (n8n 2.14+) kept first. Spelled out here, not taken from the node, so that a test
	 * comparing the node's URLs with it fails when the node builds them otherwise.
	 */
	callbackUrlOf(executionId: string, row: number, origin = this.baseUrl): string {
		const token = this.resumeTokenOf(executionId);
		return `${origin}/webhook-waiting/${executionId}/omni-video?${token === undefined ? '' : `signature=${token}&`}row=${row}`;
	}

	/** The execution's resume token, as its stored run data holds it (n8n 2.14+; undefined before). */
	resumeTokenOf(executionId: string): string | undefined {
		const execution = this.executions.get(executionId);
		if (!execution) throw new Error(`No execution ${executionId}`);
		return execution.resumeToken;
	}

	/** Runs a workflow from `startNode` with the given items, like a manual or scheduled run. */
	async execute(
		workflow: IWorkflowBase,
		startNode: string,
		items: INodeExecutionData[] = [{ json: {} }],
		mode: WorkflowExecuteMode = 'manual',
		options: { customData?: Record<string, string> } = {},
	): Promise<Execution> {
		const execution = this.newExecution(workflow, mode);
		const data = startAt(workflow, startNode, items);
		// Custom data an earlier node of the workflow set (a Code node's $execution.customData.set).
		if (options.customData) data.resultData.metadata = { ...options.customData };
		await this.run(execution, data);
		return execution;
	}

	/**
	 * The executions list's Retry, as n8n's ExecutionService.retry does it: a new execution in
	 * mode 'retry' from the failed one's stored data (its custom data included), the failed node's
	 * last run dropped so that it runs again from its stored input. With `savedWorkflow` ("Retry
	 * with currently saved workflow"), the saved workflow runs, its nodes taking the stack's places.
	 */
	async retry(executionId: string, savedWorkflow?: IWorkflowBase): Promise<Execution> {
		const failed = this.executions.get(executionId);
		if (!failed?.run || failed.status !== 'error') throw new Error(`Execution ${executionId} has not failed, so it cannot be retried`);
		const data = structuredClone(failed.run.data);
		delete data.resultData.error;
		const last = data.resultData.lastNodeExecuted;
		const lastRuns = last === undefined ? undefined : data.resultData.runData[last];
		if (lastRuns?.length && lastRuns[lastRuns.length - 1].error !== undefined) lastRuns.pop();
		if (savedWorkflow) {
			const workflow = makeWorkflow(this.engine.pkg, savedWorkflow);
			for (const stack of data.executionData!.nodeExecutionStack) {
				const node = workflow.getNode(stack.node.name);
				if (!node) throw new Error(`Could not find the node "${stack.node.name}" in workflow`);
				stack.node = node;
			}
		}
		const execution = this.newExecution(savedWorkflow ?? failed.workflow, 'retry');
		await this.run(execution, data);
		return execution;
	}

	/**
	 * n8n's WaitTracker: the execution's wait time (`waitTill`) passed with no call to resume it,
	 * so n8n runs the stored execution again as it is; WorkflowExecute.handleWaitingState then
	 * disables the waiting node, which passes its stack entry's input items on. `extra`: what n8n's
	 * process gives the run besides (a test makes its bookkeeping fail).
	 */
	async waitTimeUp(executionId: string, read?: IRun, extra: Partial<IWorkflowExecuteAdditionalData> = {}): Promise<Execution> {
		const execution = this.executions.get(executionId);
		if (!execution?.run || execution.status !== 'waiting') throw new Error(`Execution ${executionId} is not waiting`);
		execution.status = 'running';
		// `read`: the wake read the execution before another step parked (n8n 2.8.4's resume guard asks the status only).
		await this.run(execution, structuredClone((read ?? execution.run).data), extra, this.waitTracker.queueMode ? 'executionCopy' : 'stored');
		return execution;
	}

	/**
	 * n8n's WaitTracker wakes a waiting execution when its wait time passes; it polls every 60 s, so
	 * up to that late (`waitTrackerLateMs`, 0 by default: at the moment itself). Off: never.
	 * `queueMode`: the woken step runs on a queue-mode worker, which n8n 2.8.4 asks not to load the
	 * workflow's static data (WaitTracker.startExecution runs with loadStaticData false, and
	 * JobProcessor then takes the execution's own copy of the workflow, whose static data no resumed
	 * step ever refreshes); when the step changes it, that copy is saved over the workflow's.
	 */
	waitTracker: { on: boolean; lateMs: number; queueMode?: boolean } = { on: true, lateMs: 0 };

	/**
	 * Holds a resume call between reading the waiting execution and resuming it (a webhook process
	 * slower than the others): a test makes n8n's races happen on purpose. `parked` is the run the
	 * call read. While a hold is set, the resume guard is n8n 2.x's own, which asks the status only;
	 * without one, a call whose execution has moved on since it read it is also refused, so that
	 * tests which do not study that race do not meet it when the machine is slow.
	 */
	resumeHold: ((execution: Execution, parked: IRun) => Promise<void>) | undefined;

	/**
	 * Called with the data a resume stores as it starts the run (what webhook() recorded, the wait
	 * time cleared, the status running): what n8n's wait tracker reads if it reads the execution
	 * while that step runs (see waitTimeUp's `read`).
	 */
	resumeStored: ((execution: Execution, data: IRunExecutionData) => void) | undefined;
	private readonly wakeTimers = new Set<NodeJS.Timeout>();

	private scheduleWake(execution: ExecutionRecord, run: IRun): void {
		if (!this.waitTracker.on || !run.waitTill) return;
		const delay = Math.max(0, run.waitTill.getTime() - Date.now()) + this.waitTracker.lateMs;
		const timer = setTimeout(() => {
			this.wakeTimers.delete(timer);
			// Still parked at that same step (a callback may have resumed it meanwhile).
			if (execution.status !== 'waiting' || execution.run !== run) return;
			void this.waitTimeUp(execution.id).catch(() => undefined);
		}, Math.min(delay, 2 ** 31 - 1));
		this.wakeTimers.add(timer);
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
		const { node, description } = webhookOf(this.engine.pkg.nodeTypes, workflow, nodeName, false);
		return `${this.baseUrl}/webhook/${webhookPath(workflow, node, description)}`;
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
			workflowCopyStaticData: structuredClone(workflow.staticData ?? {}),
		};
		this.executions.set(execution.id, execution);
		return execution;
	}

	private async run(
		execution: ExecutionRecord,
		data: IRunExecutionData,
		extra: Partial<IWorkflowExecuteAdditionalData> = {},
		staticDataFrom: 'stored' | 'executionCopy' = 'stored',
	): Promise<void> {
		execution.status = 'running';
		// n8n-workflow 1.x's types have no resumeToken (2.14+ run data has one).
		execution.resumeToken ??= (data as { resumeToken?: string }).resumeToken;
		// Each run reads the workflow's stored static data (but see waitTracker.queueMode); n8n
		// saves it back when a run ends or parks, unless the run is a manual one (hookFunctionsSave:
		// never a manual run's).
		const stored =
			staticDataFrom === 'stored' ? withStoredStaticData(execution.workflow) : { ...execution.workflow, staticData: execution.workflowCopyStaticData };
		const run = await processExecution(this.engine, stored, execution.id, execution.mode, data, extra);
		if (execution.mode !== 'manual') saveStaticData(execution.workflow, stored.staticData);
		execution.run = run;
		if (run.waitTill) {
			// n8n stores the parked execution now; only from here on do resume calls find it. Its
			// custom data goes to the execution_metadata table, which keeps 10 keys of 512 characters.
			storedAsN8nDoes(run.data.resultData);
			execution.status = 'waiting';
			this.scheduleWake(execution, run);
			return;
		}
		execution.status = run.status === 'success' ? 'success' : 'error';
		execution.resolveFinished(run);
	}

	private async route(rawReq: http.IncomingMessage, rawRes: http.ServerResponse): Promise<void> {
		const { req, res } = await expressLike(rawReq, rawRes);
		const path = new URL(req.url ?? '/', this.baseUrl).pathname;
		const call = recordCall(path, req, res);
		this.webhookCalls.push(call);
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
		// n8n 2.14+ checks the token first, before it looks at the execution's status: a call
		// without it is refused 401 even while the execution runs or once it has finished. Only
		// stored run data is checked (an execution's first step, still running, has none yet).
		if (execution.run) {
			const token = resumeTokenCheck(execution.run, req.url ?? '/', this.baseUrl);
			if (!token.valid) return void res.status(401).json({ error: 'Invalid token' });
			if (!suffix && token.webhookPath) suffix = token.webhookPath;
		}
		if (execution.status === 'running') return void res.status(409).json({ message: `The execution "${executionId}" is running already.` });
		if (execution.status !== 'waiting') return void res.status(409).json({ message: `The execution "${executionId}" has finished already.` });

		const parkedRun = execution.run;
		const { data, lastNode } = resumeDataOf(execution.run!);
		const pkg = this.webhookProcesses.length > 0 ? this.webhookProcesses[this.nextWebhookProcess++ % this.webhookProcesses.length] : this.engine.pkg;
		const workflow = makeWorkflow(pkg, execution.workflow);
		let description: IWebhookDescription;
		try {
			({ description } = webhookOf(pkg.nodeTypes, execution.workflow, lastNode, true, req.method ?? 'POST', suffix));
		} catch {
			// WaitingWebhooks: no restart webhook of the waiting node on this path and method.
			return void res.status(404).json({ message: `The workflow for execution "${executionId}" does not contain a waiting webhook with a matching path/method.` });
		}
		const { result, extra } = await this.callWebhook(execution, workflow, lastNode, description, req, res, data);
		if (result.workflowData === undefined) return void answerIfSilent(res, result);
		const held = this.resumeHold !== undefined;
		await this.resumeHold?.(execution, parkedRun!);
		// n8n 2.x resumes with a guarded update (ActiveExecutions: updateExistingExecution with
		// requireStatus 'waiting'): when another call resumed the execution meanwhile and it still
		// runs, this one fails (500) and what its webhook() wrote is thrown away. The guard asks the
		// status only: once the other resume's step has parked again, this call resumes with the data
		// it read before that step, and what that step recorded is lost (see resumeHold). The caller
		// is answered only once the resume started.
		if (execution.status !== 'waiting' || (!held && execution.run !== parkedRun)) {
			return void res.status(500).json({ message: 'There was a problem executing the workflow' });
		}
		execution.status = 'running';
		answerIfSilent(res, result);
		call.executionId = execution.id;
		continueWith(data, result.workflowData);
		this.resumeStored?.(execution, structuredClone(data));
		await this.run(execution, data, extra);
	}

	/** The node's webhook() for this call, with the request and response n8n hands on to the run. */
	private async callWebhook(
		execution: ExecutionRecord,
		workflow: Workflow,
		nodeName: string,
		description: IWebhookDescription,
		req: WebhookRequest,
		res: WebhookResponse,
		data: IRunExecutionData | null,
	): Promise<{ result: IWebhookResponseData; extra: Partial<IWorkflowExecuteAdditionalData> }> {
		const hooks = new ExecutionLifecycleHooks(execution.mode, execution.id, execution.workflow);
		const extra = { httpRequest: req, httpResponse: res } as unknown as Partial<IWorkflowExecuteAdditionalData>;
		const additionalData = makeAdditionalData(this.engine, execution.id, hooks, extra);
		const node = workflow.getNode(nodeName)!;
		const result = await runWebhook(workflow, node, description, additionalData, execution.mode, data);
		return { result, extra };
	}

	/** LiveWebhooks: the active workflow whose trigger owns the path starts a new execution. */
	private async startFromTrigger(path: string, req: WebhookRequest, res: WebhookResponse, call: WebhookCall): Promise<void> {
		for (const workflowData of this.active) {
			for (const node of workflowData.nodes) {
				const type = this.engine.pkg.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
				for (const description of type.description.webhooks ?? []) {
					if (description.restartWebhook || webhookPath(workflowData, node, description) !== path) continue;
					const execution = this.newExecution(workflowData, 'webhook');
					const workflow = makeWorkflow(this.engine.pkg, withStoredStaticData(workflowData));
					const { result, extra } = await this.callWebhook(execution, workflow, node.name, description, req, res, null);
					saveStaticData(workflowData, workflow.staticData);
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
}
