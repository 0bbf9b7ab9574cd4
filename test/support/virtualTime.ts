/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test tooling, never shipped */
import type { Clock, SendRequest, Sleep, Transport } from '../../core/http/transport';
import { VirtualClock } from '../../sandbox/clock';

interface Timer {
	at: number;
	resolve: () => void;
}

/** Lets pending promise callbacks and I/O-free async steps run to completion. */
async function settle(): Promise<void> {
	for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * One virtual clock for a core client and the sandbox it talks to: the sandbox's own clock, standing
 * still (speed 0), with the client's sleeps as timers on it. `run` drives a task; whenever every
 * piece of work is asleep and no request is in flight, time jumps to whichever comes first, one of
 * the client's timers or one of the sandbox's tasks (a render's end, a callback), and the sandbox
 * runs its tasks on the way. Hours pass in milliseconds.
 */
export class VirtualTime {
	private timers: Timer[] = [];
	private inFlight = 0;
	private waitingForQuiet: Array<() => void> = [];

	/** Without a sandbox (the limiter on its own), a clock of its own that stands still. */
	constructor(readonly source = new VirtualClock(0, Date.UTC(2026, 4, 1, 12, 0, 0))) {
		if (source.speed !== 0) throw new Error('VirtualTime drives a clock standing still (speed 0)');
	}

	readonly clock: Clock = { now: () => this.source.now() };

	/** How many times anything slept on this clock. */
	naps = 0;

	readonly sleep: Sleep = (ms, signal) =>
		new Promise<void>((resolve, reject) => {
			this.naps++;
			if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
			const timer: Timer = { at: this.source.now() + Math.max(0, ms), resolve };
			const onAbort = () => {
				this.timers = this.timers.filter((t) => t !== timer);
				reject(signal?.reason ?? new Error('aborted'));
			};
			timer.resolve = () => {
				signal?.removeEventListener('abort', onAbort);
				resolve();
			};
			signal?.addEventListener('abort', onAbort);
			this.timers.push(timer);
		});

	/** Elapsed virtual milliseconds since `since`. */
	elapsed(since: number): number {
		return this.source.now() - since;
	}

	/** Counts the requests in flight through a transport: time stands still while one is. */
	track(transport: Transport): Transport {
		const counted =
			(send: SendRequest): SendRequest =>
			(request) =>
				this.during(Promise.resolve().then(() => send(request)));
		return { api: counted(transport.api), plain: counted(transport.plain) };
	}

	/** Counts real I/O made outside a client (a request by someone else on the key) as in flight. */
	async during<T>(work: Promise<T>): Promise<T> {
		this.inFlight++;
		try {
			return await work;
		} finally {
			this.inFlight--;
			if (this.inFlight === 0) for (const wake of this.waitingForQuiet.splice(0)) wake();
		}
	}

	/** Moves time forward by hand, through every timer and sandbox task due by then. */
	async advance(ms: number): Promise<void> {
		const target = this.source.now() + ms;
		for (;;) {
			await this.quiet();
			const next = this.nextAt();
			if (next === undefined || next > target) break;
			this.jumpTo(next);
		}
		this.jumpTo(target);
		await this.quiet();
	}

	/** Runs the task, moving time forward whenever it (and everything else) is only sleeping. */
	async run<T>(task: Promise<T>): Promise<T> {
		let finished = false;
		const watched = task.finally(() => {
			finished = true;
		});
		watched.catch(() => undefined);
		for (;;) {
			await this.quiet();
			if (finished) return watched;
			const next = this.nextAt();
			if (next === undefined) throw new Error('VirtualTime: the task is stuck: nothing is asleep and it has not finished');
			this.jumpTo(next);
		}
	}

	/** Until nothing can happen without time passing: no request in flight, every callback run. */
	private async quiet(): Promise<void> {
		for (;;) {
			await settle();
			if (this.inFlight === 0) return;
			await new Promise<void>((resolve) => this.waitingForQuiet.push(resolve));
		}
	}

	private nextAt(): number | undefined {
		const times = this.timers.map((t) => t.at);
		const sandboxNext = this.source.nextAt();
		if (sandboxNext !== undefined) times.push(sandboxNext);
		return times.length > 0 ? Math.min(...times) : undefined;
	}

	/** The sandbox's tasks due by `at` run first: a job that ends at the instant a client looks is seen ended. */
	private jumpTo(at: number): void {
		this.source.advance(Math.max(0, at - this.source.now()));
		const now = this.source.now();
		const due = this.timers.filter((t) => t.at <= now);
		this.timers = this.timers.filter((t) => t.at > now);
		for (const t of due) t.resolve();
	}
}
