import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateGenerateInput } from '../../core';
import { ServerLedger, type LedgerState } from '../src/ledger';
import { requestIdentity } from '../src/requestKey';
import { readSettings, SettingsError } from '../src/settings';
import { SpendCapError, SpendGuard, type SpendState } from '../src/spendCap';
import { StateFile } from '../src/stateFile';

describe('how a retry is told from a new request (docs/mcp.md#retries-and-new-videos)', () => {
	const request = validateGenerateInput({ prompt: 'A heron', resolution: '1080p' });
	const windowMs = 10 * 60_000;
	let now = 1_000_000;
	const file = new StateFile<LedgerState>(undefined, () => ({ creates: {} }));
	const ledger = new ServerLedger(file, () => now);
	const identity = (options: { requestId?: string; newVideo?: boolean } = {}) =>
		requestIdentity('fp', request, { ...options, retryWindowMs: windowMs, notedAtMs: (key) => ledger.notedAtMs(key), nowMs: now });

	it('the same arguments are the same key within the window, the next key after it', () => {
		const first = identity();
		expect(requestIdentity('fp', validateGenerateInput({ prompt: 'A heron', resolution: '1080P', duration: 8 }), { retryWindowMs: windowMs, notedAtMs: () => undefined, nowMs: now }).idempotencyKey).toBe(first.idempotencyKey);
		ledger.note(first.idempotencyKey, { jobId: 'job_1' });
		now += windowMs - 1;
		expect(identity().idempotencyKey).toBe(first.idempotencyKey);
		now += 2;
		const later = identity();
		expect(later.idempotencyKey).not.toBe(first.idempotencyKey);
		// The later request is itself retried within its own window.
		ledger.note(later.idempotencyKey, { jobId: 'job_2' });
		now += 1_000;
		expect(identity().idempotencyKey).toBe(later.idempotencyKey);
	});

	it('another key, newVideo and a new requestId are new requests; the same requestId is not', () => {
		const base = identity().idempotencyKey;
		expect(requestIdentity('other', request, { retryWindowMs: windowMs, notedAtMs: () => undefined, nowMs: now }).idempotencyKey).not.toBe(base);
		const a = identity({ newVideo: true });
		const b = identity({ newVideo: true });
		expect(a.idempotencyKey).not.toBe(b.idempotencyKey);
		expect(a.requestId).toMatch(/^new_/);
		expect(identity({ requestId: 'x' }).idempotencyKey).toBe(identity({ requestId: 'x' }).idempotencyKey);
		expect(identity({ requestId: 'x' }).idempotencyKey).not.toBe(identity({ requestId: 'y' }).idempotencyKey);
	});
});

describe('the spend cap', () => {
	const request = validateGenerateInput({ prompt: 'p', resolution: '720P', duration: 4 });
	const job = (id: string, status: 'queued' | 'done' | 'failed', credits: { creditsQueued?: number; creditsUsed?: number }) => ({ id, status, rawStatus: status, resultUrls: [], ...credits });

	it('counts what the service reports, frees a failed job, and refuses what would pass the cap', () => {
		let now = 0;
		const guard = new SpendGuard({ credits: 50, periodHours: 1 }, new StateFile<SpendState>(undefined, () => ({ spend: {} })), () => now);
		// The price is unknown: one create at a time.
		const first = guard.reserve('fp', request);
		expect(() => guard.reserve('fp', request)).toThrow(SpendCapError);
		guard.observe('fp', job('job_1', 'queued', { creditsQueued: 20 }), request);
		first.release();
		// 20 spent, 20 a create: a second fits, a third would pass 50.
		guard.reserve('fp', request).release();
		guard.observe('fp', job('job_2', 'queued', { creditsQueued: 20 }), request);
		expect(() => guard.reserve('fp', request)).toThrow(/spend cap is 50 credits per 1 h, 40 are spent/);
		guard.observe('fp', job('job_2', 'failed', { creditsUsed: 0 }));
		guard.reserve('fp', request).release();
		// Past the period, nothing counts.
		now += 3_600_001;
		guard.observe('fp', job('job_3', 'done', { creditsQueued: 20, creditsUsed: 20 }), request);
		guard.reserve('fp', request).release();
	});

	it('keeps its count and the ledger in the state file across a restart', () => {
		const dir = mkdtempSync(join(tmpdir(), 'omni-video-mcp-state-'));
		try {
			const path = join(dir, 'state.json');
			const open = () => new StateFile<LedgerState & SpendState>(path, () => ({ creates: {}, spend: {} }));
			new ServerLedger(open(), () => 0).note('idem_a', { jobId: 'job_a' });
			expect(new ServerLedger(open(), () => 1).find('idem_a')).toEqual({ jobId: 'job_a' });
			// Records older than a day are not answered.
			expect(new ServerLedger(open(), () => 24 * 3_600_000).find('idem_a')).toBeUndefined();
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe('settings', () => {
	it('never takes the key from the command line, and refuses what it does not know', () => {
		expect(() => readSettings(['--api-key', 'secret'], {})).toThrow(/never from the command line/);
		expect(() => readSettings(['--api-key=secret'], {})).toThrow(SettingsError);
		expect(() => readSettings(['--colour'], {})).toThrow(/Unknown option --colour/);
		expect(() => readSettings([], { OMNI_VIDEO_PLAN: 'gold' })).toThrow(/pro or premium/);
		expect(() => readSettings(['--wait-seconds', '900'], {})).toThrow(/--wait-seconds must be a number from 0 to 600/);
	});

	it('defaults: stdio, loopback, 45 s, no base URL (each call says to set it)', () => {
		expect(readSettings([], {})).toMatchObject({ transport: 'stdio', host: '127.0.0.1', port: 3333, waitSeconds: 45, baseUrl: '', plan: 'pro', allowedDirs: [] });
		expect(readSettings(['--http', '--port', '0', '--allow-origin', 'https://a.example'], { OMNI_VIDEO_BASE_URL: 'https://api.example.com/api/v1/' })).toMatchObject({
			transport: 'http',
			port: 0,
			allowedOrigins: ['https://a.example'],
			baseUrl: 'https://api.example.com',
		});
		expect(readSettings([], { OMNI_VIDEO_BASE_URL: 'http://api.example.com' }).baseUrlProblem).toMatch(/https:\/\//);
	});
});
