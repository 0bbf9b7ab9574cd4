import { BatchProgress, reconcileBatch } from '../../core/callbacks/batchProgress';
import { PLANS } from '../../core/types';
import type { JobRecord } from '../../core/types';
import { closeCoreSandboxes, coreSandbox } from '../support/coreHarness';

const job = (id: string, status: JobRecord['status']): JobRecord => ({ id, status, rawStatus: status, resultUrls: [] });
const ended = (id: string) => job(id, 'done');

afterEach(closeCoreSandboxes);

describe('BatchProgress: a batch of jobs behind one callback URL', () => {
	it('needs no lookup while callbacks arrive where they should, in any order and twice', () => {
		const progress = new BatchProgress(['a', 'b', 'c'], 60_000, true);
		for (const id of ['c', 'a', 'c', 'b']) {
			expect(progress.inDoubt(10_000)).toEqual([]);
			progress.record(ended(id), 10_000);
		}
		expect(progress.claimResume()).toBe(true);
		expect(progress.claimResume()).toBe(false);
		expect(progress.jobs().map((job) => job.id)).toEqual(['a', 'b', 'c']);
	});

	it('looks up a job whose callback is late (lost) once the batch should have ended, then not again for a minute', () => {
		const progress = new BatchProgress(['a', 'b'], 60_000, true);
		progress.record(ended('a'), 30_000);
		expect(progress.inDoubt(70_000)).toEqual([]);
		expect(progress.inDoubt(80_000)).toEqual(['b']);
		progress.record(job('b', 'running'), 80_000);
		expect(progress.inDoubt(100_000)).toEqual([]);
		expect(progress.inDoubt(140_000)).toEqual(['b']);
	});

	it('in a process that did not watch the batch from its start, every unseen job is in doubt once', async () => {
		const { time, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(Promise.all([1, 2, 3].map((i) => client.generateVideo({ prompt: `p${i}` }))));
		const ids = created.map((c) => c.job.id);
		const progress = new BatchProgress(ids, time.clock.now() + 60_000, false);
		await time.advance(70_000);
		progress.record(ended(ids[0]), time.clock.now());
		expect(progress.inDoubt(time.clock.now())).toEqual(ids.slice(1));
		await time.run(reconcileBatch(client.runtime, progress));
		expect(progress.complete).toBe(true);
	});

	it('looks up at the first callback a job that should have ended before the batch was parked', () => {
		const expectedEnds = new Map([
			['early', 40_000],
			['late', 130_000],
		]);
		const progress = new BatchProgress(['early', 'late'], 130_000, true, { expectedEnds, watchedSinceMs: 70_000 });
		expect(progress.inDoubt(75_000)).toEqual(['early']);
	});

	it('hands each job in doubt to one of several callbacks arriving together', async () => {
		const { time, sent, client } = await coreSandbox({ limits: PLANS.pro });
		const created = await time.run(Promise.all([1, 2, 3].map((i) => client.generateVideo({ prompt: `p${i}` }))));
		const ids = created.map((c) => c.job.id);
		const progress = new BatchProgress(ids, time.clock.now() + 60_000, false);
		await time.advance(70_000);
		const before = sent.lookups().length;
		await time.run(Promise.all([1, 2, 3, 4].map(() => reconcileBatch(client.runtime, progress))));
		expect(sent.lookups().length - before).toBe(3);
		expect(progress.complete).toBe(true);
	});
});
