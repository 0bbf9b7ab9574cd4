import type { ToolCall } from './toolCall';

/** How often a waiting call tells the client it is alive: well inside any client's patience. */
const HEARTBEAT_MS = 5_000;

export interface Progress {
	/** What the call is doing now, said with the next notification. */
	say(message: string): void;
	stop(): void;
}

/**
 * Progress notifications for a call whose client asked for them (it sent a progress token): the
 * seconds waited so far out of the call's bound, so the value always rises as the protocol asks,
 * with what is happening in words. Sent at once, on every change, and every few seconds between.
 */
export function progressFor(call: ToolCall, boundSeconds: number): Progress {
	const sink = call.progress;
	if (sink === undefined) return { say: () => undefined, stop: () => undefined };
	const started = Date.now();
	let message = 'Starting';
	let last = -1;
	const send = () => {
		// Each notification a little past the last, even two in one instant (a new message says more).
		const progress = Math.max(Math.round((Date.now() - started) / 100) / 10, last + 0.01);
		last = progress;
		// A client gone away cannot be told: the call ends on its own bound.
		sink.send(progress, Math.max(boundSeconds, progress), message).catch(() => undefined);
	};
	const timer = setInterval(send, HEARTBEAT_MS);
	timer.unref();
	send();
	return {
		say(next) {
			if (next === message) return;
			message = next;
			send();
		},
		stop: () => clearInterval(timer),
	};
}
