import type { ServerContext } from '@modelcontextprotocol/server';
import type { PlanName } from '../../core';
import type { CallAuth, SignedIn } from './signIn/bearerAccess';

/**
 * What a tool needs of the call it serves, the same on either protocol era and transport: the
 * call's own cancellation, the bearer key of its HTTP request, and where its progress goes.
 */
export interface ToolCall {
	/** Aborted when the client cancels the call while it runs (never after it answered). */
	readonly signal: AbortSignal;
	/**
	 * The key the call uses: its HTTP request's bearer key, or the key its sign-in token stands for;
	 * none over stdio (the environment's key then).
	 */
	readonly apiKey?: string;
	/** The plan of a signed-in person's own key (the server's plan otherwise). */
	readonly plan?: PlanName;
	/** Who signed in, when the call came with a token of ours: a team member has a cap and records of their own. */
	readonly signedIn?: SignedIn;
	/** Where progress goes, when the client asked for it (it sent a progress token). */
	readonly progress?: ProgressSink;
}

export interface ProgressSink {
	send(progress: number, total: number, message: string): Promise<void>;
}

/** A call in flight: its ToolCall, and the end that lets go of the SDK's signal. */
export interface RunningCall {
	call: ToolCall;
	end(): void;
}

/**
 * The ToolCall of one SDK request. Its signal follows the SDK's while the call runs, and any other
 * `stops` (a cancellation heard by another process); once the call ends, neither reaches it: the
 * SDK closes a stateless request's signal after every answer, which is no cancellation of what the
 * call left running (a create already sent, a job's look schedule).
 */
export function toolCallFrom(ctx: ServerContext, stops: AbortSignal[] = []): RunningCall {
	const controller = new AbortController();
	const sources = [ctx.mcpReq.signal, ...stops];
	const abort = () => controller.abort();
	for (const source of sources) {
		if (source.aborted) abort();
		else source.addEventListener('abort', abort, { once: true });
	}
	const token = ctx.mcpReq._meta?.progressToken;
	const progress: ProgressSink | undefined =
		token === undefined ? undefined : { send: (value, total, message) => ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: value, total, message } }) };
	return {
		call: { signal: controller.signal, ...callKey(ctx), progress },
		end: () => {
			for (const source of sources) source.removeEventListener('abort', abort);
		},
	};
}

/** The key, plan and person a request's authorization stands for (see BearerGate). */
export function callKey(ctx: Pick<ServerContext, 'http'>): Pick<ToolCall, 'apiKey' | 'plan' | 'signedIn'> {
	const auth = ctx.http?.authInfo as CallAuth | undefined;
	if (!auth) return {};
	return auth.extra ? { apiKey: auth.extra.apiKey, plan: auth.extra.plan, signedIn: auth.extra.signedIn } : { apiKey: auth.token };
}
