/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test tooling, never shipped */
import type { Clock, Sleep } from '../../core/transport';

interface Timer {
	at: number;
	resolve: () => void;
}

/** Lets pending promise callbacks and I/O-free async steps run to completion. */
async function settle(): Promise<void> {
	for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Virtual time for core's injected clock and sleep: `run` drives a task, and whenever every
 * pending piece of work is asleep it jumps to the earliest timer. Hours pass in milliseconds.
 */
export class FakeTime {
	private current: number;
	private timers: Timer[] = [];

	constructor(start = Date.UTC(2026, 4, 1, 12, 0, 0)) {
		this.current = start;
	}

	readonly clock: Clock = { now: () => this.current };

	readonly sleep: Sleep = (ms, signal) =>
		new Promise<void>((resolve, reject) => {
			if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
			const timer: Timer = { at: this.current + Math.max(0, ms), resolve };
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
		return this.current - since;
	}

	/** Moves time forward by hand, waking sleepers due by then. */
	async advance(ms: number): Promise<void> {
		const target = this.current + ms;
		for (;;) {
			await settle();
			const next = this.earliest();
			if (!next || next.at > target) break;
			this.fire(next.at);
		}
		this.current = target;
		await settle();
	}

	/** Runs the task, advancing virtual time whenever it (and everything else) is only sleeping. */
	async run<T>(task: Promise<T>): Promise<T> {
		let finished = false;
		const watched = task.finally(() => {
			finished = true;
		});
		watched.catch(() => undefined);
		for (;;) {
			await settle();
			if (finished) return watched;
			const next = this.earliest();
			if (!next) throw new Error('FakeTime: the task is stuck: nothing is asleep and it has not finished');
			this.fire(next.at);
		}
	}

	private earliest(): Timer | undefined {
		return this.timers.reduce<Timer | undefined>((a, t) => (!a || t.at < a.at ? t : a), undefined);
	}

	private fire(at: number): void {
		this.current = Math.max(this.current, at);
		const due = this.timers.filter((t) => t.at <= at);
		this.timers = this.timers.filter((t) => t.at > at);
		for (const t of due) t.resolve();
	}
}
