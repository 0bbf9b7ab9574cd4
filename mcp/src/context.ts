import { randomUUID } from 'node:crypto';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { Connections, type Connection } from './connection';
import { JobWatches } from './jobWatch';
import { ServerLedger } from './ledger';
import type { Settings } from './settings';
import { SpendGuard } from './spendCap';
import type { StateStore } from './state/store';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What every tool shares in one server process, across sessions, and with other processes through the store. */
export interface ToolContext {
	settings: Settings;
	/** The call's connection: its bearer key over HTTP, else the environment's. */
	connect(extra: ToolExtra): Connection;
	ledger: ServerLedger;
	spend: SpendGuard;
	/** Each job's one look schedule, and what was last seen of it. */
	watches: JobWatches;
}

export function createToolContext(settings: Settings, store: StateStore): ToolContext {
	const connections = new Connections(settings, store, `${process.pid}-${randomUUID()}`);
	const now = () => Date.now();
	return {
		settings,
		connect: (extra) => connections.forKey(extra.authInfo?.token),
		ledger: new ServerLedger(store, now),
		spend: new SpendGuard(settings.spendCap, store, now),
		watches: new JobWatches(store, now),
	};
}
