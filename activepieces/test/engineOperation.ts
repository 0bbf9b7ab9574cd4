/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- the Activepieces piece's test harness: n8n's rules for community nodes do not apply to it */
/**
 * One engine operation, as an engine process runs it (see ./engine.ts for what is read where):
 * the piece found and loaded as the engine's loader does, a step's input processed and validated,
 * its context built, and the action or trigger run. The store, files and waitpoints are the
 * server's, reached over HTTP (./engineServer.ts), as the engine's services reach them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
	ApFile,
	backwardCompatabilityContextUtils,
	getAuthPropertyForValue,
	PropertyType,
	type Action,
	type ActionContext,
	type InputPropertyMap,
	type Piece,
	type PieceAuthProperty,
	type PieceProperty,
	type Store,
	StoreScope,
	type Trigger,
} from '@activepieces/pieces-framework';
import { AUTHENTICATION_PROPERTY_NAME, DEFAULT_MCP_DATA, ExecutionType, extractPieceFromModule, getPackageAliasForPiece, type ResumePayload } from '@activepieces/shared';

/** The piece installed where the engine looks for it (AP_CUSTOM_PIECES_PATHS). */
export interface InstalledPiece {
	customPiecesPath: string;
	pieceName: string;
	pieceVersion: string;
}

/** The engine's retry constants (Retry on Failure): attempts, and the backoff's factor. */
export const RETRY = { maxAttempts: 4, retryExponential: 2 };

/** Where the engine reaches its server: the internal API, and the public address resume URLs use. */
export interface ServerUrls {
	internalApiUrl: string;
	publicApiUrl: string;
}

/**
 * Which loader finds the piece's entry: today's engine (piece-loader.ts: a bundle at the install
 * folder's root, as an uploaded archive leaves it, else the package's own bundle, else
 * package.json's `main`, else `src/index.js`); `main` alone (engines between); or `legacy`, older
 * engines, which load `<package>/src/index.js` whatever `main` says.
 */
export type PieceLoader = 'current' | 'main' | 'legacy';

export function pieceEntry({ customPiecesPath, pieceName, pieceVersion }: InstalledPiece, loader: PieceLoader = 'current'): string {
	const folder = join(customPiecesPath, 'pieces', getPackageAliasForPiece({ pieceName, pieceVersion }));
	const packageDir = join(folder, 'node_modules', pieceName);
	const legacyEntry = join(packageDir, 'src', 'index.js');
	if (loader === 'legacy') return legacyEntry;
	if (loader === 'current') for (const bundle of [join(folder, 'index.bundle.js'), join(packageDir, 'index.bundle.js')]) if (existsSync(bundle)) return bundle;
	const { main } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { main?: string };
	const fromMain = main ? join(packageDir, main) : undefined;
	if (loader === 'main') return fromMain ?? legacyEntry;
	return fromMain && existsSync(fromMain) ? fromMain : legacyEntry;
}

/** Loads the piece from its entry, and picks the export that is a Piece (shared's extractPieceFromModule). */
export function loadPieceFrom(entry: string, installed: InstalledPiece): Piece {
	if (!existsSync(entry)) throw new Error(`Piece not found: ${entry} is missing (npm run build --workspace activepieces)`);
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- the engine imports the entry by its path
	const module = require(entry) as Record<string, unknown>;
	return extractPieceFromModule<Piece>({ module, pieceName: installed.pieceName, pieceVersion: installed.pieceVersion });
}

const ENGINE_TOKEN = 'engine-token';

async function serverCall(url: string, init: RequestInit = {}): Promise<Response> {
	return fetch(url, { ...init, headers: { ...(init.headers as Record<string, string>), Authorization: `Bearer ${ENGINE_TOKEN}` } });
}

/** The flow's store, as the engine's storage service reaches the server's store entries. */
function contextStore(urls: ServerUrls, prefix: string, flowId: string): Store {
	const key = (name: string, scope: StoreScope = StoreScope.FLOW) => {
		if (typeof name !== 'string' || name.length === 0 || name.length > 128) throw new Error(`Invalid store key: ${String(name)}`);
		return scope === StoreScope.PROJECT ? prefix + name : `${prefix}flow_${flowId}/${name}`;
	};
	const entries = (name?: string) => `${urls.internalApiUrl}v1/store-entries${name === undefined ? '' : `?key=${encodeURIComponent(name)}`}`;
	const check = async (response: Response) => {
		if (!response.ok && response.status !== 404) throw new Error(`Storage error: ${response.status} ${await response.text()}`);
		return response;
	};
	return {
		put: async <T>(name: string, value: T, scope?: StoreScope) => {
			await check(await serverCall(entries(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: key(name, scope), value }) }));
			return value;
		},
		get: async <T>(name: string, scope?: StoreScope) => {
			const response = await check(await serverCall(entries(key(name, scope))));
			if (response.status === 404) return null;
			return ((await response.json()) as { value: T }).value ?? null;
		},
		delete: async (name: string, scope?: StoreScope) => {
			await check(await serverCall(entries(key(name, scope)), { method: 'DELETE' }));
		},
	};
}

/** The step's files, posted to the server, which refuses one over the instance's limit. */
function stepFiles(urls: ServerUrls, stepName: string) {
	return {
		write: async ({ fileName, data }: { fileName: string; data: Buffer }) => {
			const response = await serverCall(`${urls.internalApiUrl}v1/step-files`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ fileName, stepName, base64: data.toString('base64') }),
			});
			const answer = (await response.json()) as { url?: string; message?: string };
			if (!response.ok || !answer.url) throw new Error(answer.message ?? `Failed to upload file: ${response.status}`);
			return answer.url;
		},
	};
}

const DATA_URI = /^data:([A-Za-z-+/]+);base64,(.+)$/;

/** The engine's processors, for the property types the piece declares. */
async function processValue(property: PieceProperty, value: unknown): Promise<unknown> {
	if (value === null || value === undefined) return property.type === PropertyType.FILE ? null : value;
	switch (property.type) {
		case PropertyType.SHORT_TEXT:
		case PropertyType.LONG_TEXT:
		case PropertyType.SECRET_TEXT: {
			const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
			return text.length === 0 && !property.required ? undefined : text;
		}
		case PropertyType.NUMBER:
			return value === '' ? undefined : Number(value);
		case PropertyType.CHECKBOX:
			if (typeof value === 'boolean') return value;
			return String(value).toLowerCase() === 'true' ? true : String(value).toLowerCase() === 'false' ? false : value;
		case PropertyType.FILE: {
			if (typeof value !== 'string') return null;
			const inline = DATA_URI.exec(value);
			if (inline) {
				const extension = inline[1].split('/')[1] ?? 'bin';
				return new ApFile(`unknown.${extension}`, Buffer.from(inline[2], 'base64'), extension);
			}
			// A URL is downloaded by the engine before the step runs; a failure leaves the value empty.
			try {
				const response = await fetch(value);
				const name = new URL(value).pathname.split('/').pop() || 'unknown';
				return new ApFile(name, Buffer.from(await response.arrayBuffer()), name.includes('.') ? name.split('.').pop() : undefined);
			} catch {
				return null;
			}
		}
		default:
			return value;
	}
}

/** The engine's validation after processing: the messages it fails a step with, by property. */
function problemsOf(property: PieceProperty, value: unknown, original: unknown): string[] {
	if (!property.required && (value === null || value === undefined)) return [];
	const expect = (ok: boolean, what: string) => (ok ? [] : [`Expected ${what}, received: ${String(original)}`]);
	switch (property.type) {
		case PropertyType.SHORT_TEXT:
		case PropertyType.LONG_TEXT:
			return expect(typeof value === 'string', 'string');
		case PropertyType.NUMBER:
			return expect(typeof value === 'number' && !Number.isNaN(value), 'number');
		case PropertyType.CHECKBOX:
			return expect(typeof value === 'boolean', 'boolean');
		case PropertyType.FILE:
			return expect(typeof value === 'object' && value !== null, 'file url or base64 with mimeType');
		default:
			return [];
	}
}

/** Processes and validates a step's resolved input; fails as the engine fails the step. */
async function processInput(input: Record<string, unknown>, props: InputPropertyMap, auth: PieceAuthProperty | undefined, requireAuth: boolean): Promise<Record<string, unknown>> {
	const processed: Record<string, unknown> = { ...input };
	const errors: Record<string, string[]> = {};
	const authValue = input[AUTHENTICATION_PROPERTY_NAME] as { type: string } | undefined;
	if (authValue && requireAuth && auth) {
		const used = getAuthPropertyForValue({ authValueType: authValue.type as never, pieceAuth: auth });
		if (used?.type === PropertyType.CUSTOM_AUTH && used.props) {
			// As in the engine: the connection value ({ type, props }) is processed against the auth's props.
			processed[AUTHENTICATION_PROPERTY_NAME] = await processInput(authValue as Record<string, unknown>, used.props as InputPropertyMap, undefined, false);
		}
	}
	for (const [name, value] of Object.entries(input)) {
		const property = props[name] as PieceProperty | undefined;
		if (!property || name === AUTHENTICATION_PROPERTY_NAME) continue;
		processed[name] = await processValue(property, value);
		const problems = problemsOf(property, processed[name], value);
		if (problems.length > 0) errors[name] = problems;
	}
	if (Object.keys(errors).length > 0) throw new Error(JSON.stringify(errors, null, 2));
	return processed;
}

/** A flow's run as one engine operation sees it. */
export interface RunInfo {
	id: string;
	flowId: string;
	/** The step's last output was PAUSED: this operation resumes it. */
	resuming: boolean;
}

export interface StepResult {
	status: 'SUCCEEDED' | 'PAUSED' | 'FAILED' | 'TIMEOUT';
	output?: unknown;
	errorMessage?: string;
	attempts: number;
}

export interface ActionStep {
	actionName: string;
	stepName: string;
	/** The step's input as the props resolver leaves it, the connection under `auth`. */
	input: Record<string, unknown>;
	/** The body of the request that resumed the run, when it had paused on this step. */
	resumePayload?: ResumePayload;
	/** Testing the single step in the builder: the action's `test` runs instead of `run`. */
	testStep?: boolean;
	/** Retry on Failure, and the backoff's base interval (the engine's is seconds). */
	retryOnFailure?: { retryIntervalMs: number };
	/** An agent's or MCP tool's call: the engine's action-run mode, with DEFAULT_MCP_DATA's ids. */
	toolCall?: boolean;
}

/** Runs one piece step as the engine's piece executor does, with Retry on Failure's attempts. */
export async function executeActionStep(piece: Piece, urls: ServerUrls, run: RunInfo, step: ActionStep): Promise<StepResult> {
	const action = piece.getAction(step.actionName) as Action | undefined;
	if (!action) throw new Error(`Action not found for piece: ${step.actionName}`);
	let attempts = 0;
	for (;;) {
		attempts++;
		const result = { ...(await executeOnce(piece, action, urls, run, step)), attempts };
		const retry = step.retryOnFailure && !step.testStep && !step.toolCall && result.status === 'FAILED' && attempts < RETRY.maxAttempts;
		if (!retry) return result;
		await new Promise((done) => setTimeout(done, RETRY.retryExponential ** attempts * step.retryOnFailure!.retryIntervalMs));
	}
}

async function executeOnce(piece: Piece, action: Action, urls: ServerUrls, run: RunInfo, step: ActionStep): Promise<Omit<StepResult, 'attempts'>> {
	const paused = { value: false };
	const flowId = step.toolCall ? DEFAULT_MCP_DATA.flowId : run.flowId;
	const runId = step.toolCall ? DEFAULT_MCP_DATA.flowRunId : run.id;
	try {
		const propsValue = await processInput(step.input, action.props, piece.auth as PieceAuthProperty | undefined, action.requireAuth);
		const context = {
			executionType: run.resuming ? ExecutionType.RESUME : ExecutionType.BEGIN,
			resumePayload: step.resumePayload,
			store: contextStore(urls, '', flowId),
			flows: { current: { id: flowId, version: { id: step.toolCall ? DEFAULT_MCP_DATA.flowVersionId : `${flowId}_v1` } }, list: async () => ({ data: [], next: null, previous: null }) },
			step: { name: step.stepName },
			auth: propsValue[AUTHENTICATION_PROPERTY_NAME],
			files: stepFiles(urls, step.stepName),
			server: { token: ENGINE_TOKEN, apiUrl: urls.internalApiUrl, publicUrl: urls.publicApiUrl },
			propsValue,
			tags: { add: async () => undefined },
			run: {
				id: runId,
				stop: () => undefined,
				respond: () => undefined,
				// The server makes the waitpoint (createForPause); in action-run mode there is no run to pause.
				createWaitpoint: async (request: { type: string; resumeDateTime?: string }) => {
					if (step.toolCall) throw new Error('Waitpoints can only run inside a flow: this action runs as a tool.');
					const response = await serverCall(`${urls.internalApiUrl}v1/waitpoints`, {
						method: 'POST',
						headers: { 'content-type': 'application/json' },
						body: JSON.stringify({ flowRunId: runId, stepName: step.stepName, type: request.type, version: 'V1', resumeDateTime: request.resumeDateTime }),
					});
					if (!response.ok) throw new Error(`Failed to create waitpoint: ${response.status} ${response.statusText}`);
					const { id, resumeUrl } = (await response.json()) as { id: string; resumeUrl: string };
					return { id, resumeUrl, buildResumeUrl: () => resumeUrl };
				},
				waitForWaitpoint: () => {
					paused.value = true;
				},
			},
			project: { id: 'project_1', externalId: undefined },
		} as unknown as ActionContext<PieceAuthProperty, InputPropertyMap>;
		const compatible = backwardCompatabilityContextUtils.makeActionContextBackwardCompatible({ context, contextVersion: piece.getContextInfo?.().version });
		const runMethod = step.testStep && action.test ? action.test : action.run;
		const output = await runMethod(compatible as never);
		return { status: paused.value ? 'PAUSED' : 'SUCCEEDED', output };
	} catch (error) {
		return { status: 'FAILED', errorMessage: error instanceof Error ? error.message : JSON.stringify(error) };
	}
}

/** A webhook request as the server hands it to a trigger's run. */
export interface WebhookPayload {
	method: string;
	headers: Record<string, string>;
	body: unknown;
	rawBody?: string;
	queryParams: Record<string, string>;
}

export interface TriggerHook {
	triggerName: string;
	hook: 'ON_ENABLE' | 'ON_DISABLE' | 'RUN' | 'TEST';
	flowId: string;
	input: Record<string, unknown>;
	payload?: WebhookPayload;
}

/** Runs a trigger's hook as the engine's trigger helper does; RUN and TEST answer the items. */
export async function executeTriggerHook(piece: Piece, urls: ServerUrls, call: TriggerHook): Promise<unknown[]> {
	const trigger = piece.getTrigger(call.triggerName) as Trigger | undefined;
	if (!trigger) throw new Error(`Trigger not found, triggerName=${call.triggerName}`);
	const propsValue = await processInput(call.input, trigger.props, piece.auth as PieceAuthProperty | undefined, trigger.requireAuth);
	const context = {
		store: contextStore(urls, call.hook === 'TEST' ? 'test' : '', call.flowId),
		step: { name: call.triggerName },
		app: { createListeners: () => undefined },
		setSchedule: () => undefined,
		flows: { current: { id: call.flowId, version: { id: `${call.flowId}_v1` } }, list: async () => ({ data: [], next: null, previous: null }) },
		webhookUrl: `${urls.publicApiUrl}v1/webhooks/${call.flowId}`,
		isRepublish: false,
		auth: propsValue[AUTHENTICATION_PROPERTY_NAME],
		propsValue,
		payload: call.payload ?? {},
		project: { id: 'project_1', externalId: undefined },
		server: { token: ENGINE_TOKEN, apiUrl: urls.internalApiUrl, publicUrl: urls.publicApiUrl },
		files: stepFiles(urls, call.triggerName),
	};
	switch (call.hook) {
		case 'ON_ENABLE':
			await trigger.onEnable(context as never);
			return [];
		case 'ON_DISABLE':
			await trigger.onDisable(context as never);
			return [];
		case 'TEST':
			return (await trigger.test(context as never)) as unknown[];
		case 'RUN':
			return (await trigger.run(context as never)) as unknown[];
	}
}
