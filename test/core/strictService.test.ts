import { closeCoreSandboxes, coreSandbox, mostJobsAtOnce, refused429 } from '../support/coreHarness';
import { PLANS } from '../../core/types';
import type { OmniVideoClient } from '../../core';

/**
 * Core on the strictest reading of the spec (the sandbox's `--service spec`): no Retry-After, no
 * X-RateLimit-*, and 429s that do not say whether a window or the jobs at once are full. Waiting
 * still cures every 429 (none surfaces), and no create is ever sent twice.
 */
afterEach(closeCoreSandboxes);

async function batch(client: OmniVideoClient, name: string, rows: number): Promise<string[]> {
	return Promise.all(
		Array.from({ length: rows }, async (_, row) => {
			const created = await client.generateVideo({ prompt: `${name} row ${row}`, resolution: '720P', duration: 4 });
			const job = await client.waitForJob(created.job.id, { expectedMs: created.expectedMs, timeoutMs: 3_600_000 });
			return job.status;
		}),
	);
}

describe('core on --service spec', () => {
	it('others hold every place: a 429 that does not say which limit holds back new jobs (not every request blindly), none surfaces, no create is sent twice', async () => {
		const { time, sandbox, client, others, sent } = await coreSandbox({ limits: PLANS.pro, sandbox: { service: 'spec' } });
		await time.run(others.creates(PLANS.pro.concurrentJobs));
		const statuses = await time.run(batch(client, 'held back', 10));
		expect(statuses).toEqual(Array(10).fill('done'));
		const refused = refused429(sandbox);
		expect(refused.every((entry) => entry.path === '/api/v1/generate')).toBe(true);
		// Found: read as a full window, each such 429 paused the key 5 s and every waiting create tried
		// again on its own (32 refused creates here); read as "may be the jobs at once" too, creates
		// queue for a place, learned from the refusal, and probe one at a time (6).
		expect(refused.length).toBeLessThanOrEqual(10);
		expect(mostJobsAtOnce(sandbox)).toBeLessThanOrEqual(PLANS.pro.concurrentJobs);
		// Every create that was accepted made one of the 10 jobs (5 are the others'): none was resent.
		const accepted = sent.creates().filter((request) => request.response?.status === 202);
		expect(accepted).toHaveLength(10);
		expect(new Set(sent.creates().map((request) => request.headers['Idempotency-Key'])).size).toBe(10);
		expect(sandbox.jobs.all.size).toBe(15);
	});

	it('someone else fills the minute window: requests wait without Retry-After until it frees, none surfaces', async () => {
		const { time, sandbox, client, others } = await coreSandbox({ limits: PLANS.pro, sandbox: { service: 'spec' } });
		await time.run(others.lookups(PLANS.pro.requestsPerMinute));
		const statuses = await time.run(batch(client, 'after a full window', 3));
		expect(statuses).toEqual(['done', 'done', 'done']);
		expect(sandbox.jobs.all.size).toBe(3);
		for (const entry of refused429(sandbox)) expect(entry.status).toBe(429);
	});
});
