/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- the Activepieces piece's test harness: n8n's rules for community nodes do not apply to it */
/**
 * The Activepieces engine as a piece meets it, for tests. The engine is not published on npm, so
 * this reproduces, in our own code, what its source does around a piece. Read in
 * activepieces/activepieces, packages/server/engine/src/lib/:
 * - helper/piece-loader.ts (02e12669): a piece is found under `<AP_CUSTOM_PIECES_PATHS entry>/pieces/
 *   <name>-<version>/node_modules/<name>`, loaded from its package.json's `main`, and the export
 *   whose constructor is `Piece` is the piece (shared's extractPieceFromModule).
 * - handler/piece-executor.ts (014e63de): an action's context: BEGIN, or RESUME with the server's
 *   resumePayload when the step's last output was PAUSED; the flow's store; the step's files;
 *   server URLs; `run.id`; `createWaitpoint` (the server makes the waitpoint and its resume URL) and
 *   `waitForWaitpoint` (the step's output is kept and the run pauses); the step's `test` instead of
 *   `run` when a single step is tested; a thrown error fails the step with its message.
 * - helper/error-handling.ts (03c3239e): Retry on Failure runs a failed step again, up to the
 *   engine's attempts, after an exponential backoff, with the same run and store.
 * - variables/props-processor.ts (07017f72) and variables/processors/{text,number,checkbox,file}.ts:
 *   the step's resolved input is converted by property type (a file from a URL or a base64 data
 *   URI becomes an ApFile) and validated (a required value of the wrong type fails the step).
 * - services/storage.service.ts (151d8486): store keys are `flow_<flowId>/<key>` in flow scope and
 *   `<key>` in project scope, prefixed with `test` when a trigger is tested.
 * - services/step-files.service.ts (37c44745): a file is posted to the server, refused above the
 *   instance's size limit, and named by the URL the server answers.
 * - helper/trigger-helper.ts (00a62a41): a trigger's onEnable, run (with the webhook request as
 *   `payload`), test and onDisable get the same context shape, with `webhookUrl` and the store.
 *
 * What still differs from the real engine: the piece runs in the test's process, not in the
 * engine's sandboxed worker; the server's store, files and waitpoints are kept in memory here
 * (`EngineServer`), not in its database; inputs are given resolved (no `{{step.output}}`
 * expressions); the step's progress updates, tags, agent tools and connections manager are absent
 * (the piece uses none of them); a webhook request's payload is built from the request the sandbox
 * sent (method, headers, parsed body, raw body, query), as the server's webhook controller does.
 */
import { mkdtempSync, mkdirSync, readFileSync, symlinkSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
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
import { AUTHENTICATION_PROPERTY_NAME, ExecutionType, extractPieceFromModule, getPackageAliasForPiece, type ResumePayload } from '@activepieces/shared';

/** The piece package as the repository builds it (`npm run build --workspace activepieces`). */
export const PIECE_PACKAGE_DIR = resolve(__dirname, '..');

/** A file's size limit on Activepieces' cloud (`AP_MAX_FILE_SIZE_MB`). */
const MAX_FILE_SIZE_MB = 10;
/** The engine's retry constants (Retry on Failure): attempts, and the backoff's base and factor. */
export const RETRY = { maxAttempts: 4, retryExponential: 2 };

/** What the Activepieces server keeps for the engine: store entries, step files, waitpoints. */
export class EngineServer {
	readonly storeEntries = new Map<string, unknown>();
	readonly files: Array<{ url: string; fileName: string; stepName: string; data: Buffer }> = [];
	readonly waitpoints: Array<{ id: string; runId: string; stepName: string; resumeUrl: string }> = [];
	/** `publicApiUrl`: the instance's public address with `/api/`, as the engine's constants hold it. */
	constructor(readonly publicApiUrl = 'http://localhost:4200/api/', readonly internalApiUrl = 'http://127.0.0.1:3000/api/') {}
}

/** The piece installed where the engine looks for it, and loaded as the engine loads it. */
export interface InstalledPiece {
	customPiecesPath: string;
	pieceName: string;
	pieceVersion: string;
}

/** Installs the built package under a custom pieces path, as a platform's piece install leaves it. */
export function installPiece(packageDir = PIECE_PACKAGE_DIR): InstalledPiece {
	const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { name: string; version: string };
	const customPiecesPath = mkdtempSync(join(tmpdir(), 'ap-custom-pieces-'));
	const alias = getPackageAliasForPiece({ pieceName: manifest.name, pieceVersion: manifest.version });
	const target = join(customPiecesPath, 'pieces', alias, 'node_modules', manifest.name);
	mkdirSync(dirname(target), { recursive: true });
	symlinkSync(packageDir, target, 'dir');
	return { customPiecesPath, pieceName: manifest.name, pieceVersion: manifest.version };
}

/** The piece's entry under the custom path: a bundle, else package.json's `main`, else `src/index.js`. */
function pieceEntry({ customPiecesPath, pieceName, pieceVersion }: InstalledPiece): string {
	const folder = join(customPiecesPath, 'pieces', getPackageAliasForPiece({ pieceName, pieceVersion }));
	const packageDir = join(folder, 'node_modules', pieceName);
	for (const bundle of [join(folder, 'index.bundle.js'), join(packageDir, 'index.bundle.js')]) if (existsSync(bundle)) return bundle;
	const { main } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { main?: string };
	const fromMain = main ? join(packageDir, main) : undefined;
	const entry = fromMain && existsSync(fromMain) ? fromMain : join(packageDir, 'src', 'index.js');
	if (!existsSync(entry)) throw new Error(`The piece is not built: ${entry} is missing (npm run build --workspace activepieces)`);
	return entry;
}

/** Loads the piece from its entry; `fresh` loads it as a newly started engine process would. */
export function loadPiece(installed: InstalledPiece, options: { fresh?: boolean } = {}): Piece {
	const entry = pieceEntry(installed);
	let module: Record<string, unknown> = {};
	const load = () => {
		// eslint-disable-next-line @typescript-eslint/no-require-imports -- the engine imports the entry by its path
		module = require(entry) as Record<string, unknown>;
	};
	if (options.fresh) jest.isolateModules(load);
	else load();
	return extractPieceFromModule<Piece>({ module, pieceName: installed.pieceName, pieceVersion: installed.pieceVersion });
}

/** The flow's store, as the engine's storage service keys it on the server. */
function contextStore(server: EngineServer, prefix: string, flowId: string): Store {
	const key = (name: string, scope: StoreScope = StoreScope.FLOW) => {
		if (typeof name !== 'string' || name.length === 0 || name.length > 128) throw new Error(`Invalid store key: ${String(name)}`);
		return scope === StoreScope.PROJECT ? prefix + name : `${prefix}flow_${flowId}/${name}`;
	};
	return {
		// Values travel to the server as JSON and come back parsed.
		put: async <T>(name: string, value: T, scope?: StoreScope) => {
			server.storeEntries.set(key(name, scope), JSON.parse(JSON.stringify(value)));
			return value;
		},
		get: async <T>(name: string, scope?: StoreScope) => (server.storeEntries.get(key(name, scope)) as T | undefined) ?? null,
		delete: async (name: string, scope?: StoreScope) => {
			server.storeEntries.delete(key(name, scope));
		},
	};
}

function stepFiles(server: EngineServer, stepName: string) {
	return {
		write: async ({ fileName, data }: { fileName: string; data: Buffer }) => {
			if (data.length > MAX_FILE_SIZE_MB * 1024 * 1024) {
				throw new Error(`File size ${(data.length / 1024 / 1024).toFixed(1)} MB is larger than the limit of ${MAX_FILE_SIZE_MB} MB`);
			}
			const url = `${server.internalApiUrl}v1/step-files/signed?token=file_${server.files.length + 1}`;
			server.files.push({ url, fileName, stepName, data });
			return url;
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

/** A flow's run: its id and the outputs of its steps so far. */
export interface FlowRun {
	id: string;
	flowId: string;
	steps: Map<string, StepResult>;
}

let runs = 0;
export function newFlowRun(flowId = 'flow_1'): FlowRun {
	return { id: `run_${++runs}_${Date.now().toString(36)}`, flowId, steps: new Map() };
}

export interface StepResult {
	status: 'SUCCEEDED' | 'PAUSED' | 'FAILED';
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
}

/** Runs one piece step as the engine's piece executor does, and records its output in the run. */
export async function runActionStep(piece: Piece, server: EngineServer, run: FlowRun, step: ActionStep): Promise<StepResult> {
	const action = piece.getAction(step.actionName) as Action | undefined;
	if (!action) throw new Error(`Action not found for piece: ${step.actionName}`);
	let attempts = 0;
	let result: StepResult;
	for (;;) {
		attempts++;
		result = { ...(await executeOnce(piece, action, server, run, step)), attempts };
		const retry = step.retryOnFailure && !step.testStep && result.status === 'FAILED' && attempts < RETRY.maxAttempts;
		if (!retry) break;
		await new Promise((done) => setTimeout(done, RETRY.retryExponential ** attempts * step.retryOnFailure!.retryIntervalMs));
	}
	run.steps.set(step.stepName, result);
	return result;
}

async function executeOnce(piece: Piece, action: Action, server: EngineServer, run: FlowRun, step: ActionStep): Promise<Omit<StepResult, 'attempts'>> {
	const paused = { value: false };
	const resuming = run.steps.get(step.stepName)?.status === 'PAUSED';
	try {
		const propsValue = await processInput(step.input, action.props, piece.auth as PieceAuthProperty | undefined, action.requireAuth);
		const context = {
			executionType: resuming ? ExecutionType.RESUME : ExecutionType.BEGIN,
			resumePayload: step.resumePayload,
			store: contextStore(server, '', run.flowId),
			flows: { current: { id: run.flowId, version: { id: `${run.flowId}_v1` } }, list: async () => ({ data: [], next: null, previous: null }) },
			step: { name: step.stepName },
			auth: propsValue[AUTHENTICATION_PROPERTY_NAME],
			files: stepFiles(server, step.stepName),
			server: { token: 'engine-token', apiUrl: server.internalApiUrl, publicUrl: server.publicApiUrl },
			propsValue,
			tags: { add: async () => undefined },
			run: {
				id: run.id,
				stop: () => undefined,
				respond: () => undefined,
				createWaitpoint: async () => {
					const id = `wp_${server.waitpoints.length + 1}`;
					const resumeUrl = `${server.publicApiUrl}v1/flow-runs/${run.id}/waitpoints/${id}`;
					server.waitpoints.push({ id, runId: run.id, stepName: step.stepName, resumeUrl });
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
export async function runTriggerHook(piece: Piece, server: EngineServer, call: TriggerHook): Promise<unknown[]> {
	const trigger = piece.getTrigger(call.triggerName) as Trigger | undefined;
	if (!trigger) throw new Error(`Trigger not found, triggerName=${call.triggerName}`);
	const propsValue = await processInput(call.input, trigger.props, piece.auth as PieceAuthProperty | undefined, trigger.requireAuth);
	const context = {
		store: contextStore(server, call.hook === 'TEST' ? 'test' : '', call.flowId),
		step: { name: call.triggerName },
		app: { createListeners: () => undefined },
		setSchedule: () => undefined,
		flows: { current: { id: call.flowId, version: { id: `${call.flowId}_v1` } }, list: async () => ({ data: [], next: null, previous: null }) },
		webhookUrl: `${server.publicApiUrl}v1/webhooks/${call.flowId}`,
		isRepublish: false,
		auth: propsValue[AUTHENTICATION_PROPERTY_NAME],
		propsValue,
		payload: call.payload ?? {},
		project: { id: 'project_1', externalId: undefined },
		server: { token: 'engine-token', apiUrl: server.internalApiUrl, publicUrl: server.publicApiUrl },
		files: stepFiles(server, call.triggerName),
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
