/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- the Activepieces piece's test harness: n8n's rules for community nodes do not apply to it */
/**
 * The Activepieces engine as a piece meets it, for tests. The engine is not published on npm, so
 * this reproduces, in our own code, what its source does around a piece. Read in
 * activepieces/activepieces (commits as stored when read):
 * - packages/server/engine/src/lib/helper/piece-loader.ts (02e12669): a piece is found under
 *   `<AP_CUSTOM_PIECES_PATHS entry>/pieces/<name>-<version>/`: `index.bundle.js` at that root,
 *   else the package's own `index.bundle.js`, else its package.json's `main`, else
 *   `src/index.js` (the only entry older engines load); the export whose constructor is named
 *   `Piece` is the piece (shared's extractPieceFromModule). See engineOperation.ts's PieceLoader.
 * - packages/server/worker/src/lib/cache/pieces/piece-installer.ts (0e4e924b): a registry piece is
 *   installed as a dependency of that folder; an uploaded archive is unpacked there with its
 *   `package/` stripped and nothing installed (install.test.ts does both with the packed tarball).
 * - packages/server/engine/src/lib/handler/piece-executor.ts (014e63de): an action's context: BEGIN,
 *   or RESUME with the server's resumePayload when the step's last output was PAUSED; the flow's
 *   store; the step's files; server URLs; `run.id`; `createWaitpoint` (the server makes the
 *   waitpoint and its resume URL) and `waitForWaitpoint` (the step's output is kept and the run
 *   pauses); the step's `test` instead of `run` when a single step is tested; a thrown error
 *   fails the step with its message.
 * - packages/server/engine/src/lib/helper/error-handling.ts (03c3239e): Retry on Failure runs a
 *   failed step again in the same engine operation (the same process), up to the engine's
 *   attempts, after an exponential backoff, with the same run and store.
 * - packages/server/engine/src/lib/handler/context/engine-constants.ts (0ced02e4) and
 *   handler/action-run-step-runner.ts (45aec8bd): an action run alone, as an agent's or MCP
 *   tool, gets the constant ids of shared's DEFAULT_MCP_DATA (`mcp-flow-id`, `mcp-flow-run-id`)
 *   and no flow to pause (ActionStep.toolCall).
 * - packages/server/worker/src/lib/sandbox/sandbox.ts (014b8781) and the worker's sandbox
 *   environment (its baseEnv: AP_FLOW_TIMEOUT_SECONDS, AP_MAX_FILE_SIZE_MB): each run and each
 *   webhook is one operation of an engine process, killed at the flow timeout (the run ends as
 *   TIMEOUT); the engine process reads both limits from its environment.
 * - packages/server/engine/src/lib/services/storage.service.ts (151d8486), waitpoint-client.ts
 *   (79303a80), step-files.service.ts (37c44745), and the server's waitpoint-service.ts
 *   (014e63de), resume-controller.ts (014e63de), resume-delay-handler.ts (892d6081): see
 *   engineServer.ts, the server side, reached over HTTP only.
 * - variables/props-processor.ts (07017f72) and variables/processors/{text,number,checkbox,file}.ts:
 *   the step's resolved input is converted by property type (a file from a URL or a base64 data
 *   URI becomes an ApFile) and validated (a required value of the wrong type fails the step).
 * - helper/trigger-helper.ts (00a62a41): a trigger's onEnable, run (with the webhook request as
 *   `payload`), test and onDisable get the same context shape, with `webhookUrl` and the store
 *   (keys prefixed with `test` when a trigger is tested).
 *
 * Given the installed piece, each operation runs in an engine process of its own
 * (engineProcess.ts, started with the worker's environment and killed at its time limit); given
 * a loaded piece, in the test's process (for what needs no process: metadata, a connection's
 * validation). What still differs from the real engine: the engine process is Node with tsx, not
 * the engine's bundle in its sandbox; the server keeps its store, files and waitpoints in memory
 * (engineServer.ts), not in a database, and takes step files as JSON; inputs are given resolved
 * (no `{{step.output}}` expressions); the step's progress updates, tags, agent tools and
 * connections manager are absent (the piece uses none of them); a webhook request's payload is
 * built from the request the sandbox sent (method, headers, parsed body, raw body, query), as the
 * server's webhook controller does.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Piece } from '@activepieces/pieces-framework';
import { getPackageAliasForPiece } from '@activepieces/shared';
import { DEFAULT_FLOW_TIMEOUT_SECONDS } from '../src/run/runLimits';
import { EngineServer } from './engineServer';
import { executeActionStep, executeTriggerHook, loadPieceFrom, pieceEntry, type ActionStep, type InstalledPiece, type PieceLoader, type StepResult, type TriggerHook } from './engineOperation';
import type { EngineAnswer, EngineOperation } from './engineProcess';

export { EngineServer } from './engineServer';
export { RETRY, type ActionStep, type InstalledPiece, type PieceLoader, type StepResult, type TriggerHook, type WebhookPayload } from './engineOperation';

/** The piece package as the repository builds it (`npm run build --workspace activepieces`). */
export const PIECE_PACKAGE_DIR = resolve(__dirname, '..');

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

/** Removes what installPiece made (the link to the package, not the package). */
export function uninstallPiece(installed: InstalledPiece): void {
	rmSync(installed.customPiecesPath, { recursive: true, force: true });
}

/** Loads the piece in this (the test's) process, for its metadata and its connection's validation. */
export function loadPiece(installed: InstalledPiece): Piece {
	return loadPieceFrom(pieceEntry(installed), installed);
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

/** The worker's settings for an engine process: its time limit and the file limit in its environment. */
export interface EngineSettings {
	/** AP_FLOW_TIMEOUT_SECONDS: the worker kills the process after this long (the run ends as TIMEOUT). */
	flowTimeoutSeconds?: number;
	/** Which engine's loader finds the piece (see PieceLoader): today's by default. */
	loader?: PieceLoader;
	/** Runs after the engine process answered and before the server records the run's new state. */
	beforeRunStatus?: () => Promise<void>;
}

const ENGINE_PROCESS = join(__dirname, 'engineProcess.ts');
const TSX = require.resolve('tsx/cjs');

/**
 * Runs one operation in an engine process of its own, with the worker's environment, and kills
 * it at the flow timeout as the worker's sandbox does (timeLimitSeconds = AP_FLOW_TIMEOUT_SECONDS).
 */
async function inEngineProcess(server: EngineServer, operation: EngineOperation, settings: EngineSettings): Promise<EngineAnswer | 'TIMEOUT'> {
	const timeoutSeconds = settings.flowTimeoutSeconds ?? DEFAULT_FLOW_TIMEOUT_SECONDS;
	const child = fork(ENGINE_PROCESS, [], {
		execArgv: ['--require', TSX],
		env: { ...process.env, AP_FLOW_TIMEOUT_SECONDS: String(timeoutSeconds), AP_MAX_FILE_SIZE_MB: String(server.maxFileSizeMb) },
		stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
	});
	return new Promise((resolve, reject) => {
		let answered = false;
		const timer = setTimeout(() => {
			answered = true;
			child.kill('SIGKILL');
			resolve('TIMEOUT');
		}, timeoutSeconds * 1000);
		child.once('message', (answer: EngineAnswer) => {
			answered = true;
			clearTimeout(timer);
			resolve(answer);
		});
		child.once('exit', (code, signal) => {
			clearTimeout(timer);
			if (!answered) reject(new Error(`the engine process exited (code ${code}, signal ${signal}) without an answer`));
		});
		child.send(operation);
	});
}

/**
 * Runs one piece step as the engine runs a flow's step: in an engine process of its own when
 * given the installed piece (as the worker does), or in this process when given a loaded piece.
 * The run is RUNNING on the server meanwhile; its output is recorded in the run.
 */
export async function runActionStep(target: Piece | InstalledPiece, server: EngineServer, run: FlowRun, step: ActionStep, settings: EngineSettings = {}): Promise<StepResult> {
	await server.ready();
	const urls = { internalApiUrl: server.internalApiUrl, publicApiUrl: server.publicApiUrl };
	const info = { id: run.id, flowId: run.flowId, resuming: run.steps.get(step.stepName)?.status === 'PAUSED' };
	server.setRunStatus(run.id, 'RUNNING');
	let result: StepResult;
	if ('customPiecesPath' in target) {
		const answer = await inEngineProcess(server, { kind: 'action', installed: target, loader: settings.loader, urls, run: info, step }, settings);
		if (answer === 'TIMEOUT') result = { status: 'TIMEOUT', errorMessage: 'The flow ran past its time limit (AP_FLOW_TIMEOUT_SECONDS) and was stopped.', attempts: 1 };
		else if (!answer.ok) throw new Error(answer.error);
		else result = answer.value as StepResult;
	} else {
		result = await executeActionStep(target, urls, info, step);
	}
	run.steps.set(step.stepName, result);
	await settings.beforeRunStatus?.();
	server.setRunStatus(run.id, result.status === 'SUCCEEDED' ? 'SUCCEEDED' : result.status);
	return result;
}

/**
 * Runs a step to its end as the server drives a run: when it pauses, waits for the resume the
 * server hands on (one that came while the run was RUNNING is handed on at once) and runs the
 * step again with RESUME. Every output it had on the way is returned.
 */
export async function runStepThrough(target: Piece | InstalledPiece, server: EngineServer, run: FlowRun, step: ActionStep, settings: EngineSettings = {}): Promise<StepResult[]> {
	const results = [await runActionStep(target, server, run, step, settings)];
	while (results[results.length - 1].status === 'PAUSED') {
		const resumePayload = (await server.nextResume(run.id)) ?? undefined;
		results.push(await runActionStep(target, server, run, { ...step, resumePayload }, settings));
	}
	return results;
}

/** Runs a trigger's hook as the engine's trigger helper does: in an engine process of its own for an installed piece. */
export async function runTriggerHook(target: Piece | InstalledPiece, server: EngineServer, call: TriggerHook, settings: EngineSettings = {}): Promise<unknown[]> {
	await server.ready();
	const urls = { internalApiUrl: server.internalApiUrl, publicApiUrl: server.publicApiUrl };
	if (!('customPiecesPath' in target)) return executeTriggerHook(target, urls, call);
	const answer = await inEngineProcess(server, { kind: 'trigger', installed: target, loader: settings.loader, urls, call }, settings);
	if (answer === 'TIMEOUT') throw new Error('The trigger ran past its time limit and was stopped.');
	if (!answer.ok) throw new Error(answer.error);
	return answer.value as unknown[];
}
