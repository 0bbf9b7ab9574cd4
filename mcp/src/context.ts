import { randomUUID } from 'node:crypto';
import type { PlanName } from '../../core';
import { CallCancels } from './cancels';
import { Connections, type Connection } from './connection';
import { JobWatches } from './jobWatch';
import { ServerLedger } from './ledger';
import { Accounts } from './signIn/accounts';
import type { Settings } from './settings';
import { SpendGuard } from './spendCap';
import type { StateStore } from './state/store';
import type { ToolCall } from './toolCall';

/** What every tool shares in one server process, across connections, and with other processes through the store. */
export interface ToolContext {
	settings: Settings;
	/** The call's connection: its bearer key (or the key its token stands for) over HTTP, else the environment's. */
	connect(call: Pick<ToolCall, 'apiKey' | 'plan'>): Connection;
	/** Lets go of the call's key, which the service refused (see Connections.forget). */
	refused(call: Pick<ToolCall, 'apiKey'>): void;
	ledger: ServerLedger;
	spend: SpendGuard;
	/** Each job's one look schedule, and what was last seen of it. */
	watches: JobWatches;
	/** Cancellations heard by one process for a call another runs. */
	cancels: CallCancels;
	/** Checks a key typed at sign-in with one lookup that costs no credits. */
	checkKey(apiKey: string, plan: PlanName): ReturnType<Connections['check']>;
	/** Who may sign in (people's own keys, the team's members), when sign-in is on. */
	accounts: Accounts;
	/** Notes a new job in the record of the member whose call made it (a signed-in team member's). */
	madeBy(call: Pick<ToolCall, 'signedIn'>, jobId: string): Promise<void>;
	/** A line for the operator (stderr: over stdio, stdout carries the protocol alone). */
	say(line: string): void;
}

const toStderr = (line: string) => void process.stderr.write(`${line}\n`);

export function createToolContext(settings: Settings, store: StateStore, say: (line: string) => void = toStderr): ToolContext {
	const connections = new Connections(settings, store, `${process.pid}-${randomUUID()}`);
	const now = () => Date.now();
	const accounts = new Accounts(store, now);
	return {
		settings,
		connect: (call) => connections.forKey(call.apiKey, call.plan),
		refused: (call) => connections.forget(call.apiKey),
		checkKey: (apiKey, plan) => connections.check(apiKey, plan),
		ledger: new ServerLedger(store, now),
		spend: new SpendGuard(settings.spendCap, store, now),
		watches: new JobWatches(store, now),
		cancels: new CallCancels(store, now),
		accounts,
		madeBy: async (call, jobId) => {
			const member = call.signedIn?.member;
			if (member) await accounts.noteMemberJob(member, jobId);
		},
		say,
	};
}
