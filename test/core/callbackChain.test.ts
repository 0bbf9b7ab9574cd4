import { CallbackChain, type ChainEntry } from '../../core/callbacks/callbackChain';
import { reconcileBatch } from '../../core/callbacks/reconcileBatch';
import { PLANS, type JobRecord } from '../../core/types';
import { closeCoreSandboxes, coreSandbox } from '../support/coreHarness';

const job = (id: string, status: JobRecord['status']): JobRecord => ({ id, status, rawStatus: status, resultUrls: [] });
const ended = (id: string) => job(id, 'done');
const pending = (count: number): ChainEntry[] => Array.from({ length: count }, () => ({ pending: true }));

afterEach(closeCoreSandboxes);

/** Makes every row it can, as webhook() does: the job ids are row names. */
function makeRows(chain: CallbackChain, nowMs: number): number[] {
	const made: number[] = [];
	for (let place = chain.takePlace(); place !== undefined; place = chain.takePlace()) {
		const row = chain.claimRow();
		if (row === undefined) {
			chain.givePlaceBack(place);
			break;
		}
		chain.knowJob(row, `job${row}`, true, nowMs + 60_000);
		made.push(row);
	}
	return made;
}

describe('CallbackChain: rows beyond the plan’s places made as jobs end', () => {
	it('each job seen ended frees one place for the next row; a duplicate callback frees none', () => {
		const chain = new CallbackChain([{ jobId: 'job0' }, { jobId: 'job1' }, ...pending(3)], { witnessed: true, expectedEndAtMs: 60_000 });
		expect(makeRows(chain, 0)).toEqual([]);
		expect(chain.record(ended('job1'), 40_000)).toBe(true);
		expect(makeRows(chain, 40_000)).toEqual([2]);
		expect(chain.record(ended('job1'), 41_000)).toBe(false);
		expect(makeRows(chain, 41_000)).toEqual([]);
		chain.record(ended('job0'), 50_000);
		chain.record(ended('job2'), 50_000);
		expect(makeRows(chain, 50_000)).toEqual([3, 4]);
		expect(chain.complete).toBe(false);
		chain.record(ended('job3'), 90_000);
		chain.record(ended('job4'), 90_000);
		// No row left: the freed places are kept, never used for a row twice.
		expect(makeRows(chain, 90_000)).toEqual([]);
		expect(chain.claimResume()).toBe(true);
		expect(chain.claimResume()).toBe(false);
		expect(chain.outcomes().map((outcome) => ('job' in outcome ? outcome.job.id : outcome.failedKind))).toEqual(['job0', 'job1', 'job2', 'job3', 'job4']);
	});

	it('a row that cannot be made ends as failed and gives its place to the next row', () => {
		const chain = new CallbackChain([{ jobId: 'job0' }, ...pending(2)], { witnessed: true, expectedEndAtMs: 60_000 });
		chain.record(ended('job0'), 40_000);
		const place = chain.takePlace()!;
		const row = chain.claimRow()!;
		chain.failRow(row, 'input', new Error('read back differently'));
		chain.givePlaceBack(place);
		expect(makeRows(chain, 40_000)).toEqual([2]);
		chain.record(ended('job2'), 90_000);
		expect(chain.claimResume()).toBe(true);
		expect(chain.outcomes()[1]).toMatchObject({ failedKind: 'input' });
	});

	it('with nothing running that it knows of while rows wait, a process makes one row anyway', () => {
		// Another process saw the jobs end: this one gets no place freed, yet rows must not wait for ever.
		const chain = new CallbackChain([{ failedKind: 'credits' }, ...pending(2)], { witnessed: false, expectedEndAtMs: 60_000 });
		expect(makeRows(chain, 0)).toEqual([0 + 1]);
		expect(makeRows(chain, 0)).toEqual([]);
	});

	it('takes places the limiter has free though no job of the batch freed them, none once its rows are made', () => {
		const chain = new CallbackChain([{ jobId: 'job0' }, ...pending(2)], { witnessed: true, expectedEndAtMs: 60_000 });
		expect(chain.takePlace(0)).toBeUndefined();
		expect(chain.takePlace(1)).toBe('spare');
		chain.claimRow();
		chain.claimRow();
		expect(chain.takePlace(3)).toBeUndefined();
	});

	it('counts the running jobs another process made (their places are not in this process’s limiter)', () => {
		const chain = new CallbackChain([{ jobId: 'job0' }, { jobId: 'job1' }, ...pending(1)], { witnessed: false, expectedEndAtMs: 60_000 });
		expect(chain.runningElsewhere()).toBe(2);
		chain.record(ended('job0'), 1_000);
		expect(chain.runningElsewhere()).toBe(1);
		makeRows(chain, 1_000);
		expect(chain.runningElsewhere()).toBe(1);
	});

	it('needs no lookup while callbacks reach the process that made the jobs', () => {
		const chain = new CallbackChain([{ jobId: 'job0' }, { jobId: 'job1' }, ...pending(1)], { witnessed: true, expectedEndAtMs: 60_000, watchedSinceMs: 1_000 });
		chain.record(ended('job0'), 50_000);
		makeRows(chain, 50_000);
		expect(chain.takeInDoubt(55_000)).toEqual([]);
	});

	it('a process that did not make the jobs looks up, once every row is made, those it never heard of', () => {
		const chain = new CallbackChain([{ jobId: 'job0' }, { jobId: 'job1' }, ...pending(1)], { witnessed: false, expectedEndAtMs: 60_000 });
		chain.record(ended('job1'), 50_000);
		// A row is still to make: job0's callback may yet come here.
		expect(chain.takeInDoubt(50_000)).toEqual([]);
		makeRows(chain, 50_000);
		expect(chain.takeInDoubt(50_000)).toEqual(['job0']);
		expect(chain.takeInDoubt(51_000)).toEqual([]);
	});

	it('shared with another process, it looks up at each callback every job not seen ended, and a lookup frees no place', () => {
		const chain = new CallbackChain([{ jobId: 'job0' }, { jobId: 'job1' }, ...pending(2)], { witnessed: true, expectedEndAtMs: 60_000 });
		chain.markShared();
		expect(chain.takeInDoubt(10_000)).toEqual(['job0', 'job1']);
		expect(chain.takeInDoubt(11_000)).toEqual(['job0', 'job1']);
		// Seen ended by a lookup: its callback went to the other process, which refilled the place.
		chain.record(ended('job0'), 12_000);
		expect(chain.takePlace()).toBeUndefined();
		chain.record(ended('job1'), 12_000, 'callback');
		expect(chain.takePlace()).toBe('freed');
	});

	it('looks up a late job (its callback maybe lost), then not again for a minute', () => {
		const chain = new CallbackChain([{ jobId: 'job0', expectedEndAtMs: 60_000 }], { witnessed: true, expectedEndAtMs: 60_000 });
		expect(chain.takeInDoubt(100_000)).toEqual([]);
		expect(chain.takeInDoubt(130_000)).toEqual(['job0']);
		chain.record(job('job0', 'running'), 130_000);
		expect(chain.takeInDoubt(150_000)).toEqual([]);
		expect(chain.takeInDoubt(190_000)).toEqual(['job0']);
	});

	it('looks up at the first callback a job made here that should have ended before the park', () => {
		const chain = new CallbackChain(
			[
				{ jobId: 'early', expectedEndAtMs: 40_000 },
				{ jobId: 'late', expectedEndAtMs: 130_000 },
			],
			{ witnessed: true, expectedEndAtMs: 130_000, watchedSinceMs: 70_000 },
		);
		expect(chain.takeInDoubt(75_000)).toEqual(['early']);
	});

	it('a job named by a callback’s row is taken for that row, unless the row has another job', () => {
		const chain = new CallbackChain([{ jobId: 'job0' }, ...pending(2)], { witnessed: false, expectedEndAtMs: 60_000 });
		expect(chain.rowOf('jobX')).toBeUndefined();
		expect(chain.knowJob(2, 'jobX', false, 0)).toBe(true);
		expect(chain.rowOf('jobX')).toBe(2);
		expect(chain.knowJob(2, 'jobY', false, 0)).toBe(false);
		expect(chain.knowJob(0, 'jobY', false, 0)).toBe(false);
	});

	it('is reconciled by core’s lookups like any batch: a job seen ended by a lookup frees its place', async () => {
		const { time, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(Promise.all([1, 2].map((i) => client.generateVideo({ prompt: `chain ${i}` }))));
		const ids = created.map((c) => c.job.id);
		const chain = new CallbackChain([...ids.map((jobId) => ({ jobId })), ...pending(1)], { witnessed: false, expectedEndAtMs: time.clock.now() + 60_000 });
		await time.advance(200_000);
		await time.run(reconcileBatch(client.runtime, chain));
		expect(chain.takePlace()).toBe('freed');
	});

	it('hands each job in doubt to one of several callbacks arriving together', async () => {
		const { time, sent, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(Promise.all([1, 2, 3].map((i) => client.generateVideo({ prompt: `together ${i}` }))));
		const chain = new CallbackChain(
			created.map((c) => ({ jobId: c.job.id })),
			{ witnessed: false, expectedEndAtMs: time.clock.now() + 60_000 },
		);
		await time.advance(200_000);
		const before = sent.lookups().length;
		await time.run(Promise.all([1, 2, 3, 4].map(() => reconcileBatch(client.runtime, chain))));
		expect(sent.lookups().length - before).toBe(3);
		expect(chain.complete).toBe(true);
	});
});
