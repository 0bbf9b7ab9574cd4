/* eslint-disable @n8n/community-nodes/no-restricted-globals -- dev tooling, never shipped in the n8n package */

interface Scheduled {
	at: number;
	run: () => void;
	timer?: ReturnType<typeof setTimeout>;
}

/**
 * Virtual time for the sandbox: it runs `speed` times faster than real time and can be moved
 * forward by hand. Everything time-based (render times, rate windows, callback retries, upload
 * expiry, idempotency retention) reads this clock and schedules on it. At speed 0 it stands still
 * and moves only by `advance`: a test that drives it (test/support/virtualTime.ts) decides when
 * time passes, for the sandbox and its clients alike.
 */
export class VirtualClock {
	private baseVirtual: number;
	private baseReal: number;
	private tasks = new Set<Scheduled>();
	private closed = false;

	constructor(
		private speedFactor = 1,
		start = Date.now(),
	) {
		this.baseVirtual = start;
		this.baseReal = Date.now();
	}

	now(): number {
		return this.baseVirtual + (Date.now() - this.baseReal) * this.speedFactor;
	}

	get speed(): number {
		return this.speedFactor;
	}

	setSpeed(speed: number): void {
		this.rebase();
		this.speedFactor = speed;
		this.rearm();
	}

	/** Jumps forward, running everything that falls due on the way, in order. */
	advance(ms: number): void {
		const target = this.now() + ms;
		for (;;) {
			const next = [...this.tasks].sort((a, b) => a.at - b.at)[0];
			if (!next || next.at > target) break;
			this.rebase(next.at);
			this.fire(next);
		}
		this.rebase(target);
		this.rearm();
	}

	/** Real milliseconds until a virtual duration has passed (never, on a clock standing still). */
	realMs(virtualMs: number): number {
		if (this.speedFactor === 0) return virtualMs > 0 ? Infinity : 0;
		return Math.max(0, virtualMs / this.speedFactor);
	}

	/** When the earliest scheduled task falls due, if any. */
	nextAt(): number | undefined {
		let next: number | undefined;
		for (const task of this.tasks) if (next === undefined || task.at < next) next = task.at;
		return next;
	}

	/** Runs `run` when virtual time reaches `at`. */
	at(at: number, run: () => void): () => void {
		const task: Scheduled = { at, run };
		this.tasks.add(task);
		this.arm(task);
		return () => this.cancel(task);
	}

	after(virtualMs: number, run: () => void): () => void {
		return this.at(this.now() + virtualMs, run);
	}

	close(): void {
		this.closed = true;
		for (const task of this.tasks) this.cancel(task);
	}

	private rebase(virtual = this.now()): void {
		this.baseVirtual = virtual;
		this.baseReal = Date.now();
	}

	private arm(task: Scheduled): void {
		if (this.closed) return;
		if (task.timer) clearTimeout(task.timer);
		// A clock standing still runs its tasks only as `advance` reaches them.
		if (this.speedFactor === 0) return;
		const delay = this.realMs(task.at - this.now());
		task.timer = setTimeout(() => this.fire(task), Math.min(delay, 2 ** 31 - 1));
		task.timer.unref?.();
	}

	private rearm(): void {
		for (const task of this.tasks) this.arm(task);
	}

	private fire(task: Scheduled): void {
		if (!this.tasks.has(task)) return;
		if (task.at > this.now() + 1) return this.arm(task); // woke early after a speed change
		this.cancel(task);
		task.run();
	}

	private cancel(task: Scheduled): void {
		if (task.timer) clearTimeout(task.timer);
		this.tasks.delete(task);
	}
}
