import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { recordStep } from '../state/recordStep';
import type { StateStore } from '../state/store';
import type { SignInLimits } from '../signInLimits';

/** A refusal's reason, as /metrics counts it (omni_video_mcp_sign_in_refusals_total{reason}). */
export type RefusalReason = 'member_locked' | 'address_locked' | 'key_checks_address' | 'key_checks_all' | 'registrations_address' | 'wrong_code' | 'wrong_key';

/** A count that refuses once its window holds `limit`: the window's start is the first of them. */
interface Window {
	count: number;
	expiresAtMs: number;
}

const takeFromWindow = recordStep<{ limit: number; windowMs: number }, { ok: boolean; untilMs: number }>(
	'take sign-in allowance',
	([value], { limit, windowMs }, nowMs) => {
		const kept = value as Window | undefined;
		const window = kept ?? { count: 0, expiresAtMs: nowMs + windowMs };
		if (window.count >= limit) return { writes: [undefined], answer: { ok: false, untilMs: window.expiresAtMs } };
		const next = { count: window.count + 1, expiresAtMs: window.expiresAtMs };
		return { writes: [{ value: next, expiresAtMs: next.expiresAtMs }], answer: { ok: true, untilMs: next.expiresAtMs } };
	},
	`local window = load(1) or { count = 0, expiresAtMs = now + args.windowMs }
if window.count >= args.limit then return answer({ ok = false, untilMs = window.expiresAtMs }) end
window.count = window.count + 1
save(1, window, window.expiresAtMs)
return answer({ ok = true, untilMs = window.expiresAtMs })`,
);

/** Wrong tries of a name or an address, and the lock they earned. */
interface Failures {
	failures: number;
	lockedUntilMs: number;
}

const noteFailure = recordStep<{ free: number; lockMs: number; maxLockMs: number; windowMs: number }, Failures>(
	'note sign-in failure',
	([value], { free, lockMs, maxLockMs, windowMs }, nowMs) => {
		const kept = value as Failures | undefined;
		const failures = (kept?.failures ?? 0) + 1;
		const lock = failures > free ? Math.min(lockMs * 2 ** (failures - free - 1), maxLockMs) : 0;
		const next = { failures, lockedUntilMs: lock ? nowMs + lock : (kept?.lockedUntilMs ?? 0) };
		return { writes: [{ value: next, expiresAtMs: Math.max(next.lockedUntilMs, nowMs) + windowMs }], answer: next };
	},
	`local kept = load(1) or { failures = 0, lockedUntilMs = 0 }
local failures = kept.failures + 1
local lockedUntilMs = kept.lockedUntilMs
if failures > args.free then
	lockedUntilMs = now + math.min(args.lockMs * 2 ^ (failures - args.free - 1), args.maxLockMs)
end
local next = { failures = failures, lockedUntilMs = lockedUntilMs }
save(1, next, math.max(lockedUntilMs, now) + args.windowMs)
return answer(next)`,
);

const forgetFailures = recordStep<Record<string, never>, void>(
	'forget sign-in failures',
	() => ({ writes: [null], answer: undefined }),
	`redis.call('DEL', KEYS[1])
return nil`,
);

/** A name typed by a stranger is never a record's name as typed: its hash is. */
const hashed = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32);
const memberRecord = (name: string) => `signin-throttle:member:${hashed(name.toLowerCase())}`;
const addressRecord = (address: string) => `signin-throttle:address:${hashed(address)}`;

/** Why a try is refused before it is checked, and until when. */
export interface Held {
	reason: RefusalReason;
	untilMs: number;
}

/**
 * Sign-in's pushback, in the server's records (so every replica counts as one): wrong member codes
 * and keys lock the member name and the client address for a growing time; key checks with the
 * service and app registrations are bounded per address and window. Each count is one record
 * changed by one step, so a check costs the same whatever else is kept.
 */
export class SignInThrottle {
	constructor(
		private readonly store: StateStore,
		private readonly limits: SignInLimits,
		private readonly now: () => number = Date.now,
	) {}

	/** Whether the member name (team sign-in) or the address is locked by earlier wrong tries. */
	async locked(address: string, member?: string): Promise<Held | undefined> {
		const nowMs = this.now();
		if (member !== undefined) {
			const kept = await this.store.get<Failures>(memberRecord(member));
			if (kept && kept.lockedUntilMs > nowMs) return { reason: 'member_locked', untilMs: kept.lockedUntilMs };
		}
		const kept = await this.store.get<Failures>(addressRecord(address));
		if (kept && kept.lockedUntilMs > nowMs) return { reason: 'address_locked', untilMs: kept.lockedUntilMs };
		return undefined;
	}

	/** A wrong try: counted for the address and the member name; answers the lock it earned, if any. */
	async failed(address: string, member?: string): Promise<Held | undefined> {
		const nowMs = this.now();
		const { failures, lockMs, maxLockMs, windowMs } = this.limits;
		const byMember = member === undefined ? undefined : await this.store.run(noteFailure, [memberRecord(member)], { free: failures, lockMs, maxLockMs, windowMs }, nowMs);
		const byAddress = await this.store.run(noteFailure, [addressRecord(address)], { free: failures * 4, lockMs, maxLockMs, windowMs }, nowMs);
		if (byMember && byMember.lockedUntilMs > nowMs) return { reason: 'member_locked', untilMs: byMember.lockedUntilMs };
		if (byAddress.lockedUntilMs > nowMs) return { reason: 'address_locked', untilMs: byAddress.lockedUntilMs };
		return undefined;
	}

	/** A member signed in: their name's wrong tries are forgotten (the address's are not). */
	async succeeded(member: string): Promise<void> {
		await this.store.run(forgetFailures, [memberRecord(member)], {}, this.now());
	}

	/** One key check with the service, if the address's and everyone's allowance for the window has room. */
	async takeKeyCheck(address: string): Promise<Held | undefined> {
		const { keyChecks, keyChecksInAll, windowMs } = this.limits;
		const nowMs = this.now();
		const mine = await this.store.run(takeFromWindow, [`signin-throttle:key-checks:${hashed(address)}`], { limit: keyChecks, windowMs }, nowMs);
		if (!mine.ok) return { reason: 'key_checks_address', untilMs: mine.untilMs };
		const all = await this.store.run(takeFromWindow, ['signin-throttle:key-checks'], { limit: keyChecksInAll, windowMs }, nowMs);
		return all.ok ? undefined : { reason: 'key_checks_all', untilMs: all.untilMs };
	}

	/** One app registration from this address, if its allowance for the window has room. */
	async takeRegistration(address: string): Promise<Held | undefined> {
		const { registrations, windowMs } = this.limits;
		const taken = await this.store.run(takeFromWindow, [`signin-throttle:registrations:${hashed(address)}`], { limit: registrations, windowMs }, this.now());
		return taken.ok ? undefined : { reason: 'registrations_address', untilMs: taken.untilMs };
	}
}

/**
 * The address a request comes from: the socket's, or, only when the operator says a proxy of
 * theirs is in front (OMNI_VIDEO_MCP_TRUST_PROXY=1), the address that proxy saw: the last entry of
 * X-Forwarded-For, the one it appended (earlier entries are whatever the client sent).
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
	const socket = req.socket.remoteAddress ?? 'unknown';
	if (!trustProxy) return socket;
	const header = req.headers['x-forwarded-for'];
	const entries = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((entry) => entry.trim()).filter(Boolean);
	const last = entries.at(-1);
	return last !== undefined && isIP(last) ? last : socket;
}
