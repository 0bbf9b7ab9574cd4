import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { JobRecord } from '../../core';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { Connections, type Connection } from './connection';
import { ServerLedger, type LedgerState } from './ledger';
import type { Settings } from './settings';
import { SpendGuard, type SpendState } from './spendCap';
import { StateFile } from './stateFile';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What every tool shares in one server process, across sessions. */
export interface ToolContext {
	settings: Settings;
	/** The call's connection: its bearer key over HTTP, else the environment's. */
	connect(extra: ToolExtra): Connection;
	ledger: ServerLedger;
	spend: SpendGuard;
	/** When each job seen here is expected to end (real ms), for "look again in N s". */
	expectedEnds: Map<string, number>;
	/** Each job as last seen here: where a wait starts without spending a lookup. */
	lastSeen: Map<string, JobRecord>;
}

export function createToolContext(settings: Settings): ToolContext {
	const state = new StateFile<LedgerState & SpendState>(settings.stateFile, () => ({ creates: {}, spend: {} }));
	state.state.creates ??= {};
	state.state.spend ??= {};
	const connections = new Connections(settings);
	const now = () => Date.now();
	return {
		settings,
		connect: (extra) => connections.forKey(extra.authInfo?.token),
		ledger: new ServerLedger(state, now),
		spend: new SpendGuard(settings.spendCap, state, now),
		expectedEnds: new Map(),
		lastSeen: new Map(),
	};
}

/** Seconds until a job is expected to end, as the agent's next look: at least 5, a guess of 20 when nothing is known. */
export function lookAgainSeconds(context: ToolContext, jobId: string): number {
	const end = context.expectedEnds.get(jobId);
	return end === undefined ? 20 : Math.max(5, Math.ceil((end - Date.now()) / 1000));
}
