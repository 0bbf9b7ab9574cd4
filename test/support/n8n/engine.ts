/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test harness, never shipped */
import './environment';
import { testNodeTypes } from './testNodes';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { BinaryDataService, ExecutionLifecycleHooks, PackageDirectoryLoader, WorkflowExecute } from 'n8n-core';
import {
	NodeHelpers,
	Workflow,
	createRunExecutionData,
	type IBinaryData,
	type ICredentialType,
	type ICredentialTypes,
	type IDataObject,
	type INode,
	type INodeExecutionData,
	type INodeType,
	type INodeTypes,
	type IRun,
	type IRunExecutionData,
	type IVersionedNodeType,
	type IWorkflowBase,
	type IWorkflowExecuteAdditionalData,
	type WorkflowExecuteMode,
} from 'n8n-workflow';
import type { TestCredentialsHelper } from './credentialsHelper';

/**
 * n8n-core's services (binary data, the SSH tunnel manager) are singletons in the container of the
 * @n8n/di that n8n-core itself resolves: a copy of its own, older than the root one the build tools
 * use, and a service is only found through the container it was registered with. n8n-core's index
 * exports no container, so @n8n/di is loaded from n8n-core's folder.
 */
const { Container } = createRequire(require.resolve('n8n-core'))('@n8n/di') as typeof import('@n8n/di');

/** The package root: PackageDirectoryLoader reads its package.json and the built `dist/`. */
export const PACKAGE_DIR = resolve(__dirname, '../../..');
export const PACKAGE_NAME = 'n8n-nodes-omni-video';

export interface LoadedPackage {
	nodeTypes: INodeTypes;
	credentialTypes: ICredentialTypes;
}

/** Loads the built package exactly as n8n loads a community package. */
export async function loadPackage(): Promise<LoadedPackage> {
	const loader = new PackageDirectoryLoader(PACKAGE_DIR);
	await loader.loadAll();
	const nodes = new Map<string, INodeType | IVersionedNodeType>();
	for (const [name, loaded] of Object.entries(loader.nodeTypes)) {
		nodes.set(`${loader.packageName}.${name}`, loaded.type);
		// n8n also registers a "<name>Tool" type for AI agents that runs the same execute().
		if ((loaded.type.description as { usableAsTool?: boolean }).usableAsTool) nodes.set(`${loader.packageName}.${name}Tool`, loaded.type);
	}
	for (const [name, type] of Object.entries(testNodeTypes)) nodes.set(name, type);
	const credentials = new Map<string, ICredentialType>();
	for (const [name, loaded] of Object.entries(loader.credentialTypes)) credentials.set(name, loaded.type);
	const nodeTypes: INodeTypes = {
		getByName(type) {
			const found = nodes.get(type);
			if (!found) throw new Error(`Unknown node type ${type}`);
			return found;
		},
		getByNameAndVersion(type, version) {
			return NodeHelpers.getVersionedNodeType(this.getByName(type), version);
		},
		getKnownTypes: () => ({}),
	};
	const credentialTypes: ICredentialTypes = {
		recognizes: (type) => credentials.has(type),
		getByName(type) {
			const found = credentials.get(type);
			if (!found) throw new Error(`Unknown credential type ${type}`);
			return found;
		},
		// LoadNodesAndCredentials: the nodes that list the credential, named with the package's prefix.
		// n8n-core 2.x's credentials helper asks this for a type that sets restrictToSupportedNodes.
		getSupportedNodes: (type) => (loader.known.credentials[type]?.supportedNodes ?? []).map((name) => `${loader.packageName}.${name}`),
		getParentTypes: () => [],
	};
	return { nodeTypes, credentialTypes };
}

/** The instance URLs n8n hands to nodes ($execution.resumeUrl, webhook URLs). */
export interface InstanceUrls {
	baseUrl: string;
}

export interface EngineContext {
	pkg: LoadedPackage;
	credentialsHelper: TestCredentialsHelper;
	urls: InstanceUrls;
}

let binaryDataReady: Promise<void> | undefined;

/** n8n keeps binary data in files under its home folder; a real instance initialises this at start. */
export function initBinaryData(): Promise<void> {
	binaryDataReady ??= Container.get(BinaryDataService).init();
	return binaryDataReady;
}

/**
 * Stops what n8n-core's services keep running between executions, as a real instance does on
 * shutdown: the SSH tunnel manager, created with the first node context, sweeps stale tunnels
 * every minute on a timer that would otherwise keep the test process alive for good.
 */
export function shutdownEngine(): void {
	Container.get(SSHClientsManager).onShutdown();
}

/**
 * A deep import, as no published one exists: n8n-core's index (1.122) does not export the class,
 * and the class is the only key to the singleton. n8n's own node test harness stops it the same
 * way, `Container.get(SSHClientsManager).onShutdown()`, importing from n8n-core's source. Loaded
 * with this module, beside Container: after jest.resetModules() (a restarted n8n, see
 * N8nTestInstance.reloadPackage) a new load would be another class than the running singleton's.
 */
const { SSHClientsManager } = createRequire(require.resolve('n8n-core'))(
	'./execution-engine/ssh-clients-manager',
) as typeof import('n8n-core/dist/execution-engine/ssh-clients-manager');

/** The bytes of a binary item, wherever n8n stored them. */
export async function binaryBytes(binary: IBinaryData): Promise<Buffer> {
	return await Container.get(BinaryDataService).getAsBuffer(binary);
}

export function makeWorkflow(pkg: LoadedPackage, data: IWorkflowBase): Workflow {
	return new Workflow({
		id: data.id,
		name: data.name,
		nodes: data.nodes,
		connections: data.connections,
		nodeTypes: pkg.nodeTypes,
		active: data.active,
		staticData: data.staticData,
		settings: data.settings,
	});
}

export function makeAdditionalData(
	engine: EngineContext,
	executionId: string,
	hooks: ExecutionLifecycleHooks,
	extra: Partial<IWorkflowExecuteAdditionalData> = {},
): IWorkflowExecuteAdditionalData {
	const base = engine.urls.baseUrl;
	const data = {
		credentialsHelper: engine.credentialsHelper,
		hooks,
		executionId,
		currentNodeExecutionIndex: 0,
		restApiUrl: `${base}/rest`,
		instanceBaseUrl: base,
		formWaitingBaseUrl: `${base}/form-waiting`,
		webhookBaseUrl: `${base}/webhook`,
		webhookWaitingBaseUrl: `${base}/webhook-waiting`,
		webhookTestBaseUrl: `${base}/webhook-test`,
		variables: {},
		executeWorkflow: async () => {
			throw new Error('Sub-workflows are not used in these tests');
		},
		getRunExecutionData: async () => undefined,
		logAiEvent: () => {},
		setExecutionStatus: () => {},
		sendDataToUI: () => {},
		...extra,
	};
	// The full type has dozens of server-only members that the engine never calls for these nodes.
	return data as unknown as IWorkflowExecuteAdditionalData;
}

/** Runs execution data to its end (or until a node parks it) with n8n's WorkflowExecute. */
export async function processExecution(
	engine: EngineContext,
	workflowData: IWorkflowBase,
	executionId: string,
	mode: WorkflowExecuteMode,
	runData: IRunExecutionData,
	extra: Partial<IWorkflowExecuteAdditionalData> = {},
): Promise<IRun> {
	await initBinaryData();
	const workflow = makeWorkflow(engine.pkg, workflowData);
	const hooks = new ExecutionLifecycleHooks(mode, executionId, workflowData);
	const additionalData = makeAdditionalData(engine, executionId, hooks, extra);
	return await new WorkflowExecute(additionalData, mode, runData).processRunExecutionData(workflow);
}

/** Execution data that starts at `startNode` with the given items, as n8n's manual run does. */
export function startAt(workflowData: IWorkflowBase, startNode: string, items: INodeExecutionData[]): IRunExecutionData {
	const node = workflowData.nodes.find((candidate) => candidate.name === startNode);
	if (!node) throw new Error(`No node ${startNode}`);
	return createRunExecutionData({
		executionData: { nodeExecutionStack: [{ node, data: { main: [items] }, source: null }] },
	});
}

/** A workflow document with sensible defaults, the way n8n stores one. */
export function workflowOf(
	nodes: INode[],
	connections: IWorkflowBase['connections'],
	options: { id?: string; name?: string; active?: boolean; staticData?: IDataObject } = {},
): IWorkflowBase {
	const now = new Date();
	return {
		id: options.id ?? `wf_${Math.random().toString(36).slice(2, 10)}`,
		name: options.name ?? 'test workflow',
		active: options.active ?? false,
		isArchived: false,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		staticData: options.staticData ?? {},
		createdAt: now,
		updatedAt: now,
	} as IWorkflowBase;
}

/** Connects nodes in a line: a → b → c. */
export function chain(...names: string[]): IWorkflowBase['connections'] {
	const connections: IWorkflowBase['connections'] = {};
	for (let i = 0; i + 1 < names.length; i++) {
		connections[names[i]] = { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] };
	}
	return connections;
}
