import { PLANS } from '../../core/types';
import { planSteps, type PlanRecord } from '../../core/pacing/planRecord';
import type { SharedPlan } from '../../core/pacing/sharedPlan';
import type { JobLedger, LedgerEntry } from '../../core/jobs/jobLedger';
import { closeCoreSandboxes, coreSandbox, maxInAnyWindow, mostJobsAtOnce, refused429 } from '../support/coreHarness';

afterEach(closeCoreSandboxes);

/** core's plan rules on a record in memory, each step atomic as a store's would be (a copy changed, then put back). */
function memoryRecord(): { plan: SharedPlan; record: () => PlanRecord } {
	let record: PlanRecord = { sent: [], places: {} };
	const step = async <R>(change: (copy: PlanRecord) => R): Promise<R> => {
		const copy = structuredClone(record);
		const answer = change(copy);
		record = copy;
		return answer;
	};
	return {
		plan: {
			claimRequest: (atMs, room) => step((copy) => planSteps.claimRequest(copy, atMs, room)),
			claimPlace: (placeId, atMs, limit, lapseAtMs) => step((copy) => planSteps.claimPlace(copy, placeId, atMs, limit, lapseAtMs)),
			bindPlace: (placeId, jobId, expectedDoneAtMs, holdUntilMs) => step((copy) => planSteps.bindPlace(copy, placeId, jobId, expectedDoneAtMs, holdUntilMs)),
			releasePlace: (placeId) => step((copy) => planSteps.releasePlace(copy, placeId)),
			jobEnded: (jobId) => step((copy) => planSteps.jobEnded(copy, jobId)),
		},
		record: () => record,
	};
}

/** Two processes' burst on one Pro key: 12 jobs each, each polled to its end. */
async function twoProcessBurst(shared: boolean) {
	const memory = memoryRecord();
	const { time, sandbox, sent, client, restarted } = await coreSandbox({ limits: PLANS.pro, sharedPlan: shared ? memory.plan : undefined });
	const second = restarted();
	await time.run(
		Promise.all(
			[client, second].flatMap((process, p) =>
				Array.from({ length: 12 }, async (_, i) => {
					const created = await process.generateVideo({ prompt: `process ${p} clip ${i}`, resolution: '720P', duration: 4 });
					return process.waitForJob(created.job.id, { expectedMs: created.expectedMs });
				}),
			),
		),
	);
	return { sandbox, sent, record: memory.record() };
}

describe('a plan shared by processes on one key (SharedPlan)', () => {
	it('keeps two processes inside the plan together: no 429, 5 jobs at once, 30 requests a minute', async () => {
		const { sandbox, sent, record } = await twoProcessBurst(true);
		expect(refused429(sandbox)).toHaveLength(0);
		expect(mostJobsAtOnce(sandbox)).toBeLessThanOrEqual(5);
		expect(sent.creates()).toHaveLength(24);
		expect(maxInAnyWindow(sent.api().map((r) => r.at), 60_000)).toBeLessThanOrEqual(30);
		// Every request of both is in the record, and every place is given back.
		expect(record.sent.length).toBe(sent.api().length);
		expect(Object.keys(record.places)).toHaveLength(0);
	});

	it('without the record the same two processes collide on the plan (what the record is for)', async () => {
		const { sandbox } = await twoProcessBurst(false);
		expect(refused429(sandbox).length).toBeGreaterThan(0);
	});

	it('refuses a request the record has no room for, and answers every process\'s requests', async () => {
		const { plan } = memoryRecord();
		const room = { perMinute: 2, perHour: 10, marginMs: 1_000 };
		expect((await plan.claimRequest(1_000, room)).granted).toBe(true);
		expect((await plan.claimRequest(2_000, room)).granted).toBe(true);
		const refused = await plan.claimRequest(3_000, room);
		expect(refused).toEqual({ granted: false, sentAtMs: [1_000, 2_000] });
		expect((await plan.claimRequest(63_000, room)).granted).toBe(true);
	});

	it('gives a place to one create at a time past the limit, frees it when the job ends or its hold lapses', async () => {
		const { plan } = memoryRecord();
		expect((await plan.claimPlace('a:0', 0, 1, 120_000)).granted).toBe(true);
		await plan.bindPlace('a:0', 'job_1', 60_000, 600_000);
		expect(await plan.claimPlace('b:0', 1_000, 1, 121_000)).toEqual({ granted: false, othersFreeAtMs: [60_000] });
		await plan.jobEnded('job_1');
		expect((await plan.claimPlace('b:0', 2_000, 1, 122_000)).granted).toBe(true);
		// b's process was killed before its create was answered: its place lapses by itself.
		expect((await plan.claimPlace('c:0', 121_000, 1, 241_000)).granted).toBe(false);
		expect((await plan.claimPlace('c:0', 122_000, 1, 242_000)).granted).toBe(true);
	});
});

describe('a ledger shared by processes', () => {
	it('sends one create when two processes are asked the same one at once; the other is told it is being made elsewhere', async () => {
		const entries = new Map<string, LedgerEntry>();
		// As the server's records answer: a create sent by a live process is pending.
		const pending = (entry: LedgerEntry): LedgerEntry => ('sentAtMs' in entry ? { ...entry, pending: true } : entry);
		const ledger: JobLedger = {
			find: async (key) => {
				const known = entries.get(key);
				return known && pending(known);
			},
			note: async (key, entry) => void entries.set(key, entry),
			forget: async (key) => void entries.delete(key),
			answerLost: async () => undefined,
			claim: async (key, entry) => {
				const known = entries.get(key);
				if (known) return pending(known);
				entries.set(key, entry);
				return undefined;
			},
		};
		const { time, sent, client, restarted } = await coreSandbox({ limits: PLANS.pro, sandbox: { service: 'spec' } });
		const second = restarted();
		const input = { prompt: 'one video asked twice', resolution: '720P', duration: 4 } as const;
		const outcomes = await time.run(Promise.all([client, second].map((process) => process.createVideoOnce(input, { idempotencyKey: 'same-request', ledger }))));
		expect(sent.creates()).toHaveLength(1);
		expect(outcomes.map((made) => made.outcome).sort()).toEqual(['being made elsewhere', 'made']);
		const made = outcomes.find((outcome) => 'created' in outcome);
		// Asked again once the first is answered, the second gets that job from the ledger, sending nothing.
		const again = await time.run(second.createVideoOnce(input, { idempotencyKey: 'same-request', ledger }));
		expect(sent.creates()).toHaveLength(1);
		expect(again).toMatchObject({ outcome: 'made before', created: { job: { id: made && 'created' in made ? made.created.job.id : 'none' } } });
	});
});
