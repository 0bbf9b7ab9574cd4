import { randomUUID } from 'node:crypto';
import { CallCancels } from './cancels';
import { Connections, type Connection } from './connection';
import { JobWatches } from './jobWatch';
import { ServerLedger } from './ledger';
import type { Settings } from './settings';
import { SpendGuard } from './spendCap';
import type { StateStore } from './state/store';
import type { ToolCall } from './toolCall';

/** What every tool shares in one server process, across connections, and with other processes through the store. */
export interface ToolContext {
	settings: Settings;
	/** The call's connection: its bearer key over HTTP, else the environment's. */
	connect(call: Pick<ToolCall, 'apiKey'>): Connection;
	ledger: ServerLedger;
	spend: SpendGuard;
	/** Each job's one look schedule, and what was last seen of it. */
	watches: JobWatches;
	/** Cancellations heard by one process for a call another runs. */
	cancels: CallCancels;
	/** A line for the operator (stderr: over stdio, stdout carries the protocol alone). */
	say(line: string): void;
}

const toStderr = (line: string) => void process.stderr.write(`${line}\n`);

export function createToolContext(settings: Settings, store: StateStore, say: (line: string) => void = toStderr): ToolContext {
	const connections = new Connections(settings, store, `${process.pid}-${randomUUID()}`);
	const now = () => Date.now();
	return {
		settings,
		connect: (call) => connections.forKey(call.apiKey),
		ledger: new ServerLedger(store, now),
		spend: new SpendGuard(settings.spendCap, store, now),
		watches: new JobWatches(store, now),
		cancels: new CallCancels(store, now),
		say,
	};
}
