import { startSandbox, type Sandbox } from '../../sandbox';
import { PLANS } from '../../core/types';
import { N8nTestInstance } from '../support/n8n/instance';
import { workflowOf } from '../support/n8n/engine';
import { itemsOf, omniVideoNode, outputOf } from '../support/n8n/workflows';

/**
 * A 20-row batch on a Pro key with the credential set to Pro: the node runs the rows together,
 * and the shared limiter keeps them at 5 jobs at once and inside 30 requests a minute, so no
 * row fails with (or even meets) a 429. The sandbox is sped up 20×, its renders last 1.5 s to
 * 4.5 s; the rows tell the node so (Expected Render Time), as a user of a fast account would.
 */
const SPEED = 20;
const ROWS = 20;

let sandbox: Sandbox;
let n8n: N8nTestInstance;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED });
	n8n = await N8nTestInstance.start({ omniVideoApi: { apiKey: sandbox.keys.pro, baseUrl: sandbox.url, plan: 'pro' } });
});
afterAll(async () => {
	await n8n.stop();
	await sandbox.close();
});

it(`runs ${ROWS} rows at Pro limits without a single 429`, async () => {
	const workflow = workflowOf(
		[
			omniVideoNode('Generate', {
				resource: 'video',
				operation: 'generate',
				prompt: '={{ $json.prompt }}',
				resolution: '1080P',
				duration: 8,
				waitMode: 'dontWait',
				// 1080P 8 s is 56 s at full speed: 2.8 s here.
				options: { expectedRenderSeconds: 3 },
			}),
		],
		{},
	);
	const rows = Array.from({ length: ROWS }, (_, i) => ({ prompt: `Product shot number ${i + 1}` }));
	const run = await (await n8n.execute(workflow, 'Generate', itemsOf(...rows))).finished;

	expect(run.status).toBe('success');
	const items = outputOf(run, 'Generate');
	expect(items).toHaveLength(ROWS);
	expect(items.map((item) => item.pairedItem)).toEqual(rows.map((_, item) => ({ item })));
	expect(new Set(items.map((item) => item.json.jobId)).size).toBe(ROWS);
	const creates = sandbox.journal.filter((entry) => entry.path === '/api/v1/generate');
	expect(creates.map((entry) => entry.status)).toEqual(Array(ROWS).fill(202));
	expect(sandbox.journal.filter((entry) => entry.status === 429)).toHaveLength(0);
	expect(creates.length).toBeLessThanOrEqual(PLANS.pro.requestsPerMinute);
}, 90_000);
