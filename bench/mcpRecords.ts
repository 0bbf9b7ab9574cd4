/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- benchmarks run by people, never shipped */
/**
 * `npm run bench:mcp -- --records`: what one create's records cost as the records kept grow. One
 * create takes eight steps on the server's records: claim the create, claim a request in the key's
 * windows, take a place among its jobs at once, note the create's job, bind the place to it, note
 * the job as seen, settle its spend, free the place at the job's end. The median of 300 creates on
 * a store already holding 0, 6,000 and 100,000 records (a million on Redis), by one worker and by
 * three at once on the same key (a team's replicas); on Redis also the bytes it sent and received
 * per create. Beside them, the
 * create's two ledger steps alone (claim, note), which the issue's measurements of the earlier
 * whole-document records timed. Results: bench/results/mcp-records.json and .md.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import { PLANS } from '../core';
import { ServerLedger } from '../mcp/src/ledger';
import { jobRecordName, noteJobSeen } from '../mcp/src/jobRecords';
import { sharedPlanIn } from '../mcp/src/planRecords';
import { SpendGuard } from '../mcp/src/spendCap';
import { FileStore } from '../mcp/src/state/fileStore';
import { RedisStore } from '../mcp/src/state/redisStore';
import type { StateStore } from '../mcp/src/state/store';
import { startRedis } from '../mcp/test/support/team';

const CREATES = 300;
/** The key is a Premium key at its hourly limit, its plan record as full as it gets: each claim is refused after the same work as a granted one. */
const ROOM = { perMinute: PLANS.premium.requestsPerMinute, perHour: PLANS.premium.requestsPerHour, marginMs: 0 };
const job = (id: string) => ({ id, status: 'queued' as const, rawStatus: 'queued', resultUrls: [], creditsQueued: 20 });
const REQUEST = { model: 'omni-video' as const, prompt: 'p', resolution: '720P' as const, duration: 4 };

export interface RecordsRow {
	store: 'records folder' | 'Redis';
	kept: number;
	/** Median ms of one create's steps, one worker. */
	createMs: number;
	/** Median ms of one create's steps, each of three workers at once on the same key. */
	createMsThreeAtOnce: number;
	/** Median ms of the ledger's claim and note alone, one worker. */
	ledgerMs: number;
	/** Bytes Redis received and sent per create (one worker). */
	redisBytesPerCreate?: number;
}

/** One create's steps on the records, as the server takes them. */
async function oneCreate(store: StateStore, fingerprint: string, id: string): Promise<void> {
	const now = Date.now;
	const ledger = new ServerLedger(store, now);
	const plan = sharedPlanIn(store, fingerprint, now);
	const spend = new SpendGuard({ credits: 1e12, periodHours: 24 }, store, now);
	await ledger.claim(`idem-${id}`, { sentAtMs: now() });
	await plan.claimRequest(now(), ROOM);
	await plan.claimPlace(`place-${id}`, now(), 1e6, now() + 60_000);
	await ledger.note(`idem-${id}`, { jobId: `job-${id}` });
	await plan.bindPlace(`place-${id}`, `job-${id}`, now() + 60_000, now() + 120_000);
	await store.run(noteJobSeen, [jobRecordName(fingerprint, `job-${id}`)], { job: job(`job-${id}`), createdAtMs: now(), expectedEndAtMs: now() + 60_000 }, now());
	await spend.observe(fingerprint, job(`job-${id}`), REQUEST);
	await plan.jobEnded(`job-${id}`);
}

/** The median of `count` runs, one after another: the machine's other work moves the mean more than the median. */
async function timed(run: (i: number) => Promise<void>, count: number): Promise<number> {
	const took: number[] = [];
	for (let i = 0; i < count; i++) {
		const started = performance.now();
		await run(i);
		took.push(performance.now() - started);
	}
	took.sort((a, b) => a - b);
	return took[Math.floor(count / 2)];
}

/** The key's last hour full: Premium's hourly requests, a few seconds apart. */
async function fullHour(store: StateStore, fingerprint: string): Promise<void> {
	const plan = sharedPlanIn(store, fingerprint);
	const now = Date.now();
	const room = { perMinute: 1e9, perHour: 1e9, marginMs: 0 };
	for (let i = PLANS.premium.requestsPerHour; i > 0; i--) await plan.claimRequest(now - i * 7_000, room);
}

/** Fills the store with `count` records as creates leave them: a third each of creates, jobs and spent jobs, on many keys. */
async function fill(store: StateStore, count: number, bulk?: (records: Array<[string, string]>) => Promise<void>): Promise<void> {
	const now = Date.now();
	const records: Array<[string, unknown]> = [];
	for (let i = 0; records.length < count; i++) {
		const fingerprint = `kept${i % 500}`;
		records.push([`create:{idem-kept-${i}}`, { entry: { jobId: `job-kept-${i}` }, notedAtMs: now }]);
		records.push([jobRecordName(fingerprint, `job-kept-${i}`), { seen: { job: job(`job-kept-${i}`), seenAtMs: now }, notedAtMs: now, createdAtMs: now, expectedEndAtMs: now + 60_000 }]);
		records.push([`spent:{${fingerprint}}:job-kept-${i}`, { credits: 20, atMs: now }]);
	}
	const kept = records.slice(0, count);
	if (bulk) {
		for (let start = 0; start < kept.length; start += 10_000) await bulk(kept.slice(start, start + 10_000).map(([name, value]) => [name, JSON.stringify(value)]));
		return;
	}
	const ledger = new ServerLedger(store, Date.now);
	// The folder: through the store's own steps, so that its files are what the server writes.
	for (const [name] of kept) if (name.startsWith('create:')) await ledger.note(name.slice('create:{'.length, -1), { jobId: 'job' });
	const rest = kept.filter(([name]) => !name.startsWith('create:'));
	for (const [name, value] of rest) await store.run(noteJobSeen, [name], { job: (value as { seen?: { job: ReturnType<typeof job> } }).seen?.job ?? job('x') }, now);
}

async function measure(store: StateStore, kept: number, label: RecordsRow['store'], bytes?: () => Promise<number>): Promise<RecordsRow> {
	const team = `team-${kept}`;
	await fullHour(store, team);
	// Warmed: the code compiled, scripts cached, files and folders made.
	await timed((i) => oneCreate(store, team, `warm-${kept}-${i}`), 200);
	const before = bytes ? await bytes() : 0;
	const createMs = await timed((i) => oneCreate(store, team, `one-${kept}-${i}`), CREATES);
	const moved = bytes ? (await bytes()) - before : undefined;
	const three = await Promise.all([0, 1, 2].map((worker) => timed((i) => oneCreate(store, team, `three-${kept}-${worker}-${i}`), CREATES)));
	const ledger = new ServerLedger(store, Date.now);
	const ledgerMs = await timed(async (i) => {
		await ledger.claim(`idem-ledger-${kept}-${i}`, { sentAtMs: Date.now() });
		await ledger.note(`idem-ledger-${kept}-${i}`, { jobId: `job-ledger-${i}` });
	}, CREATES);
	return { store: label, kept, createMs, createMsThreeAtOnce: three.reduce((sum, ms) => sum + ms, 0) / three.length, ledgerMs, ...(moved === undefined ? {} : { redisBytesPerCreate: moved / CREATES }) };
}

/** Redis grows its key table a step at a time after a bulk load (a millisecond of each 100): a pause lets a million keys settle, as on a server long running. */
async function settled(kept: number): Promise<void> {
	await new Promise((resolve) => setTimeout(resolve, kept >= 100_000 ? (kept / 1_000_000) * 30_000 : 0));
}

export async function recordsBench(): Promise<RecordsRow[]> {
	const rows: RecordsRow[] = [];
	for (const kept of [0, 6_000, 100_000]) {
		const dir = mkdtempSync(join(tmpdir(), 'omni-video-mcp-bench-records-'));
		try {
			const store = new FileStore(dir, () => undefined);
			await fill(store, kept);
			// The filled files on disk first, so that their writing back does not land in the measurement.
			execSync('sync');
			rows.push(await measure(store, kept, 'records folder'));
			console.log(JSON.stringify(rows[rows.length - 1]));
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	}
	for (const kept of [0, 6_000, 100_000, 1_000_000]) {
		const redis = await startRedis();
		const admin = createClient({ url: redis.url });
		await admin.connect();
		const store = await RedisStore.open(redis.url, () => undefined);
		try {
			await fill(store, kept, async (records) => {
				const pipeline = admin.multi();
				for (const [name, value] of records) pipeline.set(`omni-video-mcp:${name}`, value, { PX: 3_600_000 });
				await pipeline.execAsPipeline();
			});
			await settled(kept);
			const bytes = async () => {
				const stats = await admin.info('stats');
				const read = (field: string) => Number(new RegExp(`${field}:(\\d+)`).exec(stats)?.[1] ?? 0);
				return read('total_net_input_bytes') + read('total_net_output_bytes');
			};
			rows.push(await measure(store, kept, 'Redis', bytes));
			console.log(JSON.stringify(rows[rows.length - 1]));
		} finally {
			await store.close();
			await admin.close();
			await redis.stop();
		}
	}
	return rows;
}

export function recordsReport(rows: RecordsRow[], date: string): string {
	const base = (row: RecordsRow) => rows.find((other) => other.store === row.store && other.kept === 0) ?? row;
	const lines = rows.map((row) => {
		const ratio = (row.createMs / base(row).createMs).toFixed(2);
		const threeRatio = (row.createMsThreeAtOnce / base(row).createMsThreeAtOnce).toFixed(2);
		return `| ${row.store} | ${row.kept.toLocaleString('en')} | ${row.createMs.toFixed(2)} ms (${ratio}×) | ${row.createMsThreeAtOnce.toFixed(2)} ms (${threeRatio}×) | ${row.ledgerMs.toFixed(2)} ms | ${row.redisBytesPerCreate === undefined ? '' : `${Math.round(row.redisBytesPerCreate).toLocaleString('en')} B`} |`;
	});
	return [
		'# MCP server: the records at any volume',
		'',
		`${date} UTC, \`npm run bench:mcp -- --records\`: one create's steps on the records (claim the create, claim a request, take a place, note the job, bind the place, note the job seen, settle its spend, free the place at its end), the median of ${CREATES} creates, on a store already holding that many records; three workers at once on the same key, as a team's replicas are. The key is a Premium key with its last hour full (${PLANS.premium.requestsPerHour} requests), its plan record as large as it gets. Against the empty store in brackets. Redis: Debian's redis-server on loopback; bytes are what it received and sent per create.`,
		'',
		'| Store | Records kept | One create, one worker | One create, three at once | Ledger claim and note | Redis bytes a create |',
		'|---|---|---|---|---|---|',
		...lines,
		'',
	].join('\n');
}

export function writeRecordsResults(rows: RecordsRow[], dir: string): void {
	const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
	writeFileSync(join(dir, 'mcp-records.json'), `${JSON.stringify({ date, rows }, null, 2)}\n`);
	writeFileSync(join(dir, 'mcp-records.md'), recordsReport(rows, date));
}
