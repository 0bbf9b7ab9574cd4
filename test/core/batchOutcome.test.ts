import { fakeClient } from '../support/coreHarness';
import { batchOutcome } from '../../core/batchOutcome';
import type { JobRecord } from '../../core/types';

describe('batch outcome (one callback URL for many jobs)', () => {
	async function batchOf(count: number, renderMs: number) {
		const setup = fakeClient();
		setup.api.renderMs = renderMs;
		const ids: string[] = [];
		for (let i = 0; i < count; i++) {
			ids.push((await setup.time.run(setup.client.generateVideo({ prompt: `row ${i}` }))).job.id);
		}
		return { ...setup, ids };
	}

	it('stops at the newest running job: an early callback costs one lookup', async () => {
		const { time, api, client, ids } = await batchOf(3, 60_000);
		const outcome = await time.run(batchOutcome(client.runtime, ids, new Map()));
		expect(outcome).toEqual({ complete: false, pendingJobId: ids[2], pendingStatus: expect.any(String) });
		expect(api.lookups()).toHaveLength(1);
	});

	it('completes with every job in batch order once all have ended, skipping known ones', async () => {
		const { time, api, client, ids } = await batchOf(3, 60_000);
		await time.advance(61_000);
		const known = new Map<string, JobRecord>();
		const first = await time.run(client.getJob(ids[0]));
		known.set(ids[0], first);
		const before = api.lookups().length;
		const outcome = await time.run(batchOutcome(client.runtime, ids, known));
		expect(outcome.complete).toBe(true);
		if (!outcome.complete) return;
		expect(outcome.jobs.map((job) => job.id)).toEqual(ids);
		expect(outcome.jobs.every((job) => job.status === 'done')).toBe(true);
		expect(api.lookups().length - before).toBe(2);
		// Created one after another, the newest ends last: only its callback finishes the batch.
		expect(outcome.lastEndedJobId).toBe(ids[2]);
	});
});
