/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never shipped */
import type { Sandbox } from '../../sandbox';
import { expectedRenderSeconds } from '../../core/pacing/estimate';
import { startTwoPlaces, TWO_PLACES_SPEED } from '../support/n8n/twoPlaces';
import type { N8nTestInstance } from '../support/n8n/instance';
import { workflowOf } from '../support/n8n/engine';
import { callbackGenerateNode, itemsOf, outputOf } from '../support/n8n/workflows';

const SPEED = TWO_PLACES_SPEED;

let sandbox: Sandbox;
let n8n: N8nTestInstance;

beforeAll(async () => {
	({ sandbox, n8n } = await startTwoPlaces());
});
afterAll(async () => {
	await n8n.stop();
	await sandbox.close();
});

describe('Wait for Callback with more items than the plan runs at once', () => {
	// Found by `npm run bench` ((d) on Pro: resumed ~25 min after the last job ended): when the
	// node parked only once its last create was sent, callbacks of jobs ending meanwhile were
	// answered 409 (n8n stores a waiting execution only when execute() returns). The node now parks
	// once the plan's places are taken and makes the other rows from the callbacks (see
	// waitForCallbackChain.test.ts); a job whose callback was refused would be looked up once.
	it('resumes within 10 s (virtual) of the last job ending, a job whose callback was refused looked up when overdue, not polled', async () => {
		const node = callbackGenerateNode({ options: { expectedRenderSeconds: expectedRenderSeconds('720P', 4) / SPEED } });
		const prompts = Array.from({ length: 6 }, (_, i) => ({ prompt: `Queued clip ${i}` }));
		const execution = await n8n.execute(workflowOf([node], {}), 'Generate', itemsOf(...prompts));
		let resumedAt = Infinity;
		let timer: Parameters<typeof clearTimeout>[0];
		await Promise.race([
			execution.finished.then(() => (resumedAt = sandbox.clock.now())),
			// 10 virtual minutes: long enough for three rounds of two 30–90 s jobs.
			new Promise((resolve) => (timer = setTimeout(resolve, 600_000 / SPEED))),
		]).finally(() => clearTimeout(timer));
		const lastEnd = Math.max(...[...sandbox.jobs.all.values()].map((job) => job.endsAt));
		// The bug resumed ~25 minutes late. A loaded machine delays the resume by real milliseconds,
		// multiplied by the speed: a CI run on the strictest reading measured 6.2 s against 5.
		expect(resumedAt - lastEnd).toBeLessThanOrEqual(10_000);
		const items = outputOf(await execution.finished, 'Generate');
		expect(items).toHaveLength(6);
		expect(items.every((item) => item.json.status === 'done')).toBe(true);
		// A job whose callback was refused (or, on the strictest reading, lost) is looked up once it is
		// overdue, and once more if it is still rendering then: at most two a job, not a poll. How many
		// callbacks meet a running step depends on the machine's load (n8n's steps take real time).
		const lookups = sandbox.journal.filter((entry) => entry.method === 'GET' && entry.path.startsWith('/api/v1/jobs/'));
		expect(lookups.length).toBeLessThanOrEqual(2 * 6);
	}, 60_000);
});
