import { isLocalSandbox, type Transport } from '../../core';

/**
 * The clock the node's client keeps: its plan's windows, its estimates, its waits and Limit Wait
 * Time. Real time, except against a local sandbox that runs sped up and asks its clients to keep
 * its own clock (started with `--client-clock sandbox`): there the node paces itself on the
 * sandbox's minutes and hours, as it does on the real service's, and only what n8n itself times (a
 * parked execution's wake, a sleep) is converted back to real time. Without this, a sped-up run
 * measures a client that cannot see the plan's hour (docs/benchmarks.md).
 */
export interface HostClock {
	/** Milliseconds since the Unix epoch, on this clock. */
	now(): number;
	/** How long a duration on this clock lasts in real time. */
	realMs(ms: number): number;
	/** The real moment of a moment on this clock (what n8n's wait takes). */
	realDate(atMs: number): Date;
}

const REAL_CLOCK: HostClock = {
	now: () => Date.now(),
	realMs: (ms) => ms,
	realDate: (atMs) => new Date(atMs),
};

/** Read again after this long (real): the sandbox's speed may be changed by hand (POST /__sandbox/clock). */
const RESYNC_MS = 5_000;
const READ_TIMEOUT_MS = 2_000;
/**
 * A reading is placed at the middle of its round trip, so it may be off by half of it, times the
 * sandbox's speed: 300 real ms at 50x are 7.5 s of the sandbox's. A process whose event loop is busy
 * (n8n's engine and a test runner in one) reads answers late, which puts the clock ahead, and `now`
 * never goes back. So a reading whose round trip is over twice the best one (and over this floor)
 * is dropped while the clock is following: the sandbox's clock and this one both run on the
 * machine's, so a good reading stays good; a change of speed, or no good reading for STALE_MS, is
 * taken whatever its round trip.
 */
const GOOD_ROUND_TRIP_MS = 20;
const STALE_MS = 60_000;

/** A local sandbox's clock as last read, by base URL; one object per sandbox, so that limiters keep it. */
class SandboxClock implements HostClock {
	speed = 1;
	private baseVirtual = 0;
	private baseReal = 0;
	private follows = false;
	private last = 0;
	/** When the base was last set from a reading, and the shortest round trip since then or its reset. */
	private takenAt = -Infinity;
	private bestRoundTripMs = Infinity;
	syncedAt = -Infinity;

	now(): number {
		if (!this.follows) return Date.now();
		// Never backwards: a reading taken during a slow answer may lag the last one a little.
		this.last = Math.max(this.last, this.baseVirtual + (Date.now() - this.baseReal) * this.speed);
		return this.last;
	}

	realMs(ms: number): number {
		return this.follows ? ms / this.speed : ms;
	}

	realDate(atMs: number): Date {
		return new Date(Date.now() + this.realMs(atMs - this.now()));
	}

	/** A reading sent at `sentAt` and answered at `answeredAt` (real ms), or none: real time. */
	follow(reading: { nowMs: number; speed: number } | undefined, sentAt: number, answeredAt: number): void {
		this.syncedAt = answeredAt;
		const roundTripMs = answeredAt - sentAt;
		const fresh = !this.follows || reading?.speed !== this.speed || answeredAt - this.takenAt >= STALE_MS;
		this.follows = reading !== undefined;
		if (!reading) return;
		if (!fresh && roundTripMs > Math.max(GOOD_ROUND_TRIP_MS, 2 * this.bestRoundTripMs)) return;
		this.bestRoundTripMs = fresh ? roundTripMs : Math.min(this.bestRoundTripMs, roundTripMs);
		this.takenAt = answeredAt;
		this.baseVirtual = reading.nowMs;
		this.baseReal = Math.round((sentAt + answeredAt) / 2);
		this.speed = reading.speed;
	}
}

const sandboxClocks = new Map<string, SandboxClock>();

/** What `GET /__sandbox/clock` says, when it asks clients to keep the sandbox's clock. */
function readingOf(body: unknown): { nowMs: number; speed: number } | undefined {
	if (!body || typeof body !== 'object') return undefined;
	const { nowMs, speed, clientClock } = body as Record<string, unknown>;
	if (clientClock !== 'sandbox' || typeof nowMs !== 'number' || typeof speed !== 'number') return undefined;
	return Number.isFinite(nowMs) && Number.isFinite(speed) && speed > 0 ? { nowMs, speed } : undefined;
}

/** The clock for this base URL: real, or a local sandbox's when it asks (read over `transport`). */
export async function hostClockFor(baseUrl: string, transport: Transport): Promise<HostClock> {
	if (!isLocalSandbox(baseUrl)) return REAL_CLOCK;
	let clock = sandboxClocks.get(baseUrl);
	if (!clock) {
		clock = new SandboxClock();
		sandboxClocks.set(baseUrl, clock);
	}
	if (Date.now() - clock.syncedAt >= RESYNC_MS) {
		const sentAt = Date.now();
		try {
			const answer = await transport.plain({ method: 'GET', url: `${baseUrl}/__sandbox/clock`, headers: { Accept: 'application/json' }, timeoutMs: READ_TIMEOUT_MS });
			clock.follow(answer.status === 200 ? readingOf(answer.body) : undefined, sentAt, Date.now());
		} catch {
			// Not our sandbox (or an older one): real time.
			clock.follow(undefined, sentAt, Date.now());
		}
	}
	return clock;
}
