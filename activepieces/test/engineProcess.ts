/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- the Activepieces piece's test harness: n8n's rules for community nodes do not apply to it */
/**
 * An engine process: started for one operation (a run of a step, a webhook's trigger run), it
 * loads the piece afresh from where it is installed, runs the operation against the server over
 * HTTP, sends back the result and exits. Nothing of the piece outlives it, as in Activepieces,
 * where the worker gives each run and each webhook an engine process of its own.
 */
import { executeActionStep, executeTriggerHook, loadPieceFrom, pieceEntry, type ActionStep, type InstalledPiece, type PieceLoader, type RunInfo, type ServerUrls, type TriggerHook } from './engineOperation';

export type EngineOperation =
	| { kind: 'action'; installed: InstalledPiece; loader?: PieceLoader; urls: ServerUrls; run: RunInfo; step: ActionStep }
	| { kind: 'trigger'; installed: InstalledPiece; loader?: PieceLoader; urls: ServerUrls; call: TriggerHook };

export type EngineAnswer = { ok: true; value: unknown } | { ok: false; error: string };

async function execute(operation: EngineOperation): Promise<unknown> {
	const piece = loadPieceFrom(pieceEntry(operation.installed, operation.loader), operation.installed);
	if (operation.kind === 'action') return executeActionStep(piece, operation.urls, operation.run, operation.step);
	return executeTriggerHook(piece, operation.urls, operation.call);
}

process.once('message', (operation: EngineOperation) => {
	execute(operation).then(
		(value) => process.send?.({ ok: true, value } satisfies EngineAnswer, () => process.exit(0)),
		(error: unknown) => process.send?.({ ok: false, error: error instanceof Error ? error.message : String(error) } satisfies EngineAnswer, () => process.exit(0)),
	);
});
