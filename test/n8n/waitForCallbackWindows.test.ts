/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never shipped */
import type { IRun } from 'n8n-workflow';
import { startSandbox, type Sandbox } from '../../sandbox';
import type { BatchRow, ParkedBatch } from '../../nodes/OmniVideo/actions/video/callbackBatch';
import { N8nTestInstance } from '../support/n8n/instance';
import { finishedWithin } from '../support/n8n/finishedWithin';
import { workflowOf } from '../support/n8n/engine';
import { callbackGenerateNode, itemsOf, outputOf } from '../support/n8n/workflows';
import { handDelivered } from '../support/n8n/handDelivered';
import { onNewestN8n } from '../support/n8n/rangeEnd';

/*
 * Wait for Callback when the plan's request windows are full: a step sends what the windows take
 * now and parks until they take more, rather than waiting inside execute(), where the execution
 * runs and n8n answers every callback 409 (a service that delivers once never sends it again).
 * The node keeps the sandbox's clock (clientClock: 'sandbox'), so the windows are the plan's own.
 */
const SPEED = 50;
/** Three requests a minute on the node's side: one is kept back for urgent ones, so bulk work sends two. */
const NARROW = { plan: 'custom', requestsPerMinute: 3, requestsPerHour: 200, concurrentJobs: 5 };

let sandbox: Sandbox;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true, clientClock: 'sandbox' });
});
afterAll(async () => {
	await sandbox.close();
});

it('sends what the windows take now and parks until they take more: callbacks meanwhile are taken, every row ends done, one job each', async () => {
	// Two callbacks that come while a step of the execution runs are answered 409 by n8n, whatever
	// the node does: the first two jobs' callbacks must come far apart and away from the step's
	// wake, in real time, however loaded the machine. Renders of each size's typical time (no
	// spread) and 10x make them 1.3 s apart and almost 1 s before the wake (a 720P row ends at 34.8 s of
	// the sandbox's, a 1080P one at 48 s, the minute is up at 60 s). At 50x with drawn render
	// times, they once came 30 ms apart, and CI's load made the first resume last longer.
	const speed = 10;
	const own = await startSandbox({ port: 0, speed, insecureCallbacks: true, clientClock: 'sandbox', renderTimes: { seed: 1, spread: 0 } });
	const n8n = await N8nTestInstance.start({ omniVideoApi: { apiKey: own.keys.pro, baseUrl: own.url, ...NARROW, webhookSecret: own.webhookSecret } });
	try {
		const rows = ['720P', '1080P', '720P', '720P', '720P', '720P'].map((resolution, i) => ({ prompt: `Narrow window clip ${i}`, resolution }));
		const prompts = rows.map((row) => row.prompt);
		const ours = () => [...own.jobs.all.values()].filter((job) => prompts.includes(job.body.prompt));
		const generate = callbackGenerateNode({ callbackTimeoutMinutes: 120, resolution: '={{ $json.resolution }}' });
		const execution = await n8n.execute(workflowOf([generate], {}), 'Generate', itemsOf(...rows));
		// Parked with two jobs (five places are free, but the minute takes two bulk requests), not
		// running on until the window has room for more.
		expect(execution.status).toBe('waiting');
		const first = ours().map((job) => job.id);
		expect(first).toHaveLength(2);
		const parked = outputOf(execution.run!, 'Generate');
		expect(parked.map((item) => item.json.status)).toEqual(['queued', 'queued', ...Array(4).fill('waitingForPlace')]);
		// It wakes when the minute opened by the first create has room again (60 s of the sandbox's) or
		// when its first jobs are overdue (45 s: half a render past their expected end), whichever is
		// first, not at once. Compared on the sandbox's clock, so that real time spent before this line
		// (a loaded machine) does not count; but the node reads that clock over HTTP every 5 s, and on a
		// loaded machine that reading may be off by some tenths of a second real: the bound leaves 25 s for it.
		const wakeOnSandbox = own.clock.now() + (execution.run!.waitTill!.getTime() - Date.now()) * speed;
		const firstCreate = Math.min(...ours().map((job) => job.createdAt));
		expect(wakeOnSandbox - firstCreate).toBeGreaterThan(20_000);

		const run = await finishedWithin(execution, 60_000);
		const items = outputOf(run, 'Generate');
		expect(items.map((item) => item.json.status)).toEqual(Array(6).fill('done'));
		expect(ours()).toHaveLength(6);
		expect(new Set(items.map((item) => item.json.jobId)).size).toBe(6);
		// The first two jobs ended while the execution waited for the window: their callbacks were
		// taken at once (200), none answered 409 for a running execution.
		const callbacksOf = (jobId: string) => n8n.webhookCalls.filter((call) => call.path.startsWith(`/webhook-waiting/${execution.id}`) && call.requestBody.includes(jobId));
		for (const jobId of first) expect(callbacksOf(jobId).map((call) => call.status)).toEqual([200]);
	} finally {
		await n8n.stop();
		await own.close();
	}
}, 90_000);

it('with nothing of the batch running, waits in the step for a window that frees up soon instead of pausing on n8n’s wait tracker (up to a minute late)', async () => {
	// Two requests a minute: bulk sends one, so each row's create waits for the minute to pass,
	// and the second row's turn comes when the first job has ended: nothing runs, no callback can come.
	const one = await N8nTestInstance.start({ omniVideoApi: { apiKey: sandbox.keys.pro, baseUrl: sandbox.url, ...NARROW, requestsPerMinute: 2, webhookSecret: sandbox.webhookSecret } });
	try {
		// n8n's wait tracker polls once a minute: a pause for the window would end a minute late.
		one.waitTracker = { on: true, lateMs: 60_000 };
		const prompts = ['Idle window clip 1', 'Idle window clip 2'];
		const execution = await one.execute(workflowOf([callbackGenerateNode({ callbackTimeoutMinutes: 120 })], {}), 'Generate', itemsOf(...prompts.map((prompt) => ({ prompt }))));
		// Paused for the first job's callback; or, where a loaded machine made the first step last
		// longer than that job's render at 50x (its callback late), done in that step already.
		expect(['waiting', 'success']).toContain(execution.status);
		// The first job's callback wakes it; the second create waits for the minute (1.2 s real) there.
		const run = await finishedWithin(execution, 20_000);
		expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(['done', 'done']);
		expect([...sandbox.jobs.all.values()].filter((job) => prompts.includes(job.body.prompt))).toHaveLength(2);
	} finally {
		await one.stop();
	}
}, 60_000);

/** A sandbox of its own whose key takes `serviceHour` requests an hour, and an n8n told `nodeHour`. */
async function hourLimited({ speed, serviceHour, nodeHour, service: reading }: { speed: number; serviceHour: number; nodeHour: number; service?: 'default' }) {
	const service = await startSandbox({
		port: 0,
		...(reading ? { service: reading } : {}),
		speed,
		insecureCallbacks: true,
		clientClock: 'sandbox',
		accounts: [{ id: 'acct_hour', plan: { requestsPerMinute: 60, requestsPerHour: serviceHour, concurrentJobs: 5 }, balance: 100_000 }],
		keys: [{ key: 'omni_test_hour', account: 'acct_hour' }],
	});
	const one = await N8nTestInstance.start({
		omniVideoApi: { apiKey: 'omni_test_hour', baseUrl: service.url, plan: 'custom', requestsPerMinute: 60, requestsPerHour: nodeHour, concurrentJobs: 5, webhookSecret: service.webhookSecret },
	});
	return { service, one };
}

// The node's own pacing against this test's stand-in for n8n's wait tracker, on the default reading
// pinned: nothing in it changes with n8n's version, and it waits out a whole hour (90 s), so it runs
// on the pinned end alone; the newest end's waits and wakes are the other tests' here.
(onNewestN8n ? it.skip : it)('a batch with nothing running, held back by the hour for longer than n8n’s wait tracker may be late, asks to be woken before the hour has room and makes its row when it does', async () => {
	// The hour takes four requests, bulk work three (one is kept back): the fourth row waits for the
	// first create to leave the hour, 90 s real at 40x, while no job runs and no callback can come.
	// Signed callbacks, on either reading of the spec: on the strictest, each would be confirmed by a
	// lookup, and the hour would take two rows, not three (the wake under test is the same).
	const { service, one } = await hourLimited({ speed: 40, serviceHour: 4, nodeHour: 4, service: 'default' });
	try {
		// n8n's wait tracker polls once a minute: a pause until the hour's room would end up to a minute (40 of the sandbox's) late.
		one.waitTracker = { on: true, lateMs: 60_000 };
		const prompts = Array.from({ length: 4 }, (_, i) => `Quiet hour clip ${i}`);
		const execution = await one.execute(workflowOf([callbackGenerateNode({ callbackTimeoutMinutes: 300 })], {}), 'Generate', itemsOf(...prompts.map((prompt) => ({ prompt }))));
		expect(execution.status).toBe('waiting');
		const ours = () => [...service.jobs.all.values()].filter((job) => prompts.includes(job.body.prompt));
		expect(ours()).toHaveLength(3);
		const run = await finishedWithin(execution, 150_000);
		expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(Array(4).fill('done'));
		const made = ours().map((job) => job.createdAt).sort((a, b) => a - b);
		expect(made).toHaveLength(4);
		// Made when the hour had room (an hour after the first create), not when the tracker got round
		// to it (40 minutes of the sandbox's later). The service refused nothing.
		expect(service.journal.filter((entry) => entry.status === 429)).toHaveLength(0);
		expect(made[3] - made[0]).toBeGreaterThan(3_600_000 - 60_000);
		expect(made[3] - made[0]).toBeLessThan(3_600_000 + 5 * 60_000);
	} finally {
		await one.stop();
		await service.close();
	}
}, 200_000);

it("a create the service refuses 429 in a step (its hour spent by other work) leaves its row waiting for a later step: the run neither fails nor blocks, every row ends done", async () => {
	// The service's hour takes 3 requests; the node is told 100, as when other processes or
	// workflows share the key: the fourth create is refused with an hour's Retry-After.
	const { service, one } = await hourLimited({ speed: 200, serviceHour: 3, nodeHour: 100 });
	try {
		const prompts = Array.from({ length: 4 }, (_, i) => `Hour spent clip ${i}`);
		const execution = await one.execute(workflowOf([callbackGenerateNode({ callbackTimeoutMinutes: 180 })], {}), 'Generate', itemsOf(...prompts.map((prompt) => ({ prompt }))));
		expect(execution.status).toBe('waiting');
		expect(outputOf(execution.run!, 'Generate').map((item) => item.json.status)).toEqual(['queued', 'queued', 'queued', 'waitingForPlace']);
		const refused = service.journal.filter((entry) => entry.method === 'POST' && entry.status === 429);
		expect(refused).toHaveLength(1);
		// An hour of the sandbox's is 18 s real at 200x.
		const run = await finishedWithin(execution, 60_000);
		const items = outputOf(run, 'Generate');
		expect(items.map((item) => item.json.status)).toEqual(Array(4).fill('done'));
		expect(service.jobs.all.size).toBe(4);
		expect(new Set(items.map((item) => item.json.jobId)).size).toBe(4);
	} finally {
		await one.stop();
		await service.close();
	}
}, 90_000);

/**
 * The tests below judge jobs overdue or late on the sandbox's clock: at 10x, a step that a loaded
 * machine slows to a second real is still short beside the jobs' expected ten seconds.
 */
let slow: Sandbox;
beforeAll(async () => {
	slow = await startSandbox({ port: 0, speed: 10, insecureCallbacks: true, clientClock: 'sandbox' });
});
afterAll(async () => {
	await slow.close();
});

/**
 * An n8n that only the callbacks a test delivers reach (the sandbox's go nowhere), whose wait
 * tracker is a minute late, as n8n's may be: a step that parks is not woken within the test.
 */
async function quietN8n(limits: Partial<typeof NARROW>, apiKey = slow.keys.pro) {
	const quiet = await N8nTestInstance.start({ omniVideoApi: { apiKey, baseUrl: slow.url, ...NARROW, ...limits, webhookSecret: slow.webhookSecret } }, { webhookUrl: 'http://127.0.0.1:9' });
	quiet.waitTracker = { on: true, lateMs: 60_000 };
	return quiet;
}

/** The rows of the batch a parked run keeps (the node's context, as n8n stores it). */
function parkedRows(run: IRun): BatchRow[] {
	const context = run.data.executionData?.contextData['node:Generate'] as { omniVideoBatch?: ParkedBatch } | undefined;
	return context?.omniVideoBatch?.rows ?? [];
}

/** Runs a batch on `quiet` and gives what a test needs to deliver its callbacks by hand. */
async function quietBatch(quiet: N8nTestInstance, prompts: string[]) {
	const ours = () => [...slow.jobs.all.values()].filter((job) => prompts.includes(job.body.prompt));
	// Expected in 10 s: the first jobs are overdue (at 15 s) before any callback could come (30 s at least).
	const execution = await quiet.execute(workflowOf([callbackGenerateNode({ callbackTimeoutMinutes: 120, options: { expectedRenderSeconds: 10 } })], {}), 'Generate', itemsOf(...prompts.map((prompt) => ({ prompt }))));
	expect(execution.status).toBe('waiting');
	const byHand = handDelivered(quiet, execution.id);
	const signed = byHand.signed(slow.webhookSecret, () => slow.clock.now());
	const rowOf = (jobId: string) => outputOf(execution.run!, 'Generate').findIndex((item) => item.json.jobId === jobId);
	const deliver = (jobId: string) => signed(jobId, rowOf(jobId));
	/** Until `check` holds, `realMs` at most. */
	const until = async (check: () => boolean, realMs = 10_000) => {
		const end = Date.now() + realMs;
		while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
	};
	/** Delivers the callbacks of `jobs` (each once it has ended, or at once: said done, signed, believed) until the run ends. */
	const finish = async (jobs: { id: string; endsAt: number }[], atOnce: string[] = []) => {
		const end = Date.now() + 20_000;
		while (execution.status !== 'success' && Date.now() < end) {
			for (const job of jobs) {
				const due = atOnce.includes(job.id) || job.endsAt <= slow.clock.now();
				if (execution.status === 'waiting' && due && rowOf(job.id) >= 0) await deliver(job.id);
			}
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		const run = await finishedWithin(execution, 5_000);
		expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(prompts.map(() => 'done'));
		expect(ours()).toHaveLength(prompts.length);
	};
	/** A callback without a signature (a service that does not sign): the step confirms it by a lookup. */
	const deliverUnsigned = (jobId: string) => byHand.unsigned(jobId, rowOf(jobId));
	return { execution, ours, deliver, deliverUnsigned, until, finish };
}

it('with only overdue jobs running (their callbacks late or lost), waits in the step for a window that frees up soon instead of pausing on n8n’s wait tracker', async () => {
	const quiet = await quietN8n({});
	try {
		// The first renders for an hour (the sandbox's): still running whenever the step looks it up.
		const prompts = ['Overdue window clip 1 [sandbox:job-fails-timeout]', 'Overdue window clip 2', 'Overdue window clip 3'];
		const { ours, deliver, until, finish } = await quietBatch(quiet, prompts);
		const first = ours();
		expect(first).toHaveLength(2);
		const firstCreate = Math.min(...first.map((job) => job.createdAt));
		// The second job's callback comes; the first job's does not (late). The step it wakes finds the
		// first job overdue (still running) and the third row waiting for the minute opened by the first creates.
		const [late, heard] = first;
		await until(() => heard.endsAt <= slow.clock.now());
		expect((await deliver(heard.id)).status).toBe(200);
		// The third row is made when the window has room (60 s of the sandbox's after the first
		// creates), not when n8n's wait tracker gets round to the execution (a minute real, 10 min here).
		await until(() => ours().length === 3);
		const third = ours().find((job) => !first.includes(job));
		expect(third).toBeDefined();
		expect(third!.createdAt - firstCreate).toBeLessThan(5 * 60_000);
		// The late job's callback comes after all, and the third's: every row ends done.
		await finish([late, third!], [late.id]);
	} finally {
		await quiet.stop();
	}
}, 60_000);

it('a create that waited in the step for the window counts from when the service took it: its job is not looked up as overdue while it renders', async () => {
	const quiet = await quietN8n({});
	try {
		const prompts = ['Waited create clip 1 [sandbox:job-fails-timeout]', 'Waited create clip 2', 'Waited create clip 3'];
		const { execution, ours, deliver, until, finish } = await quietBatch(quiet, prompts);
		const first = ours();
		const [late, heard] = first;
		await until(() => heard.endsAt <= slow.clock.now());
		expect((await deliver(heard.id)).status).toBe(200);
		// The step that callback wakes waits for the minute's room (tens of seconds of the sandbox's), then makes the third row.
		await until(() => ours().length === 3 && execution.status === 'waiting');
		const third = ours().find((job) => !first.includes(job))!;
		const rows = parkedRows(execution.run!);
		const row = rows.find((candidate) => candidate.job === third.id)!;
		// The batch counts the create (its request, its job's expected end) from its answer, not from
		// when the step began to wait: counted early, its job was overdue before it began to render.
		// The step reads the sandbox's clock across a real request: at ×10 a loaded machine's
		// milliseconds put it tens of the sandbox's ms off (CI once: 20 ms); counted early is tens of seconds.
		expect(row.endAt! - row.renderMs!).toBeGreaterThanOrEqual(third.createdAt - 1_000);
		await finish([late, third], [late.id]);
	} finally {
		await quiet.stop();
	}
}, 60_000);

it('with every row made and only late jobs left, waits in the step for the window its lookups need instead of pausing on n8n’s wait tracker', async () => {
	// Two bulk requests a minute (a third is kept back): both creates take the first minute, and a lookup the next.
	const quiet = await quietN8n({});
	try {
		const prompts = ['Last lookup clip 1', 'Last lookup clip 2'];
		const { ours, deliver, until, finish } = await quietBatch(quiet, prompts);
		const [lost, heard] = ours();
		expect(heard).toBeDefined();
		// The first job's callback is lost. The second's comes (signed, believed) once the first is
		// late, a whole render time (10 s) past its expected end, within the creates' minute.
		await until(() => slow.clock.now() >= lost.createdAt + 25_000);
		expect((await deliver(heard.id)).status).toBe(200);
		const heardAt = slow.clock.now();
		expect(heardAt).toBeLessThan(lost.createdAt + 55_000);
		const lookedUp = () => slow.journal.find((entry) => entry.method === 'GET' && entry.path.endsWith(lost.id));
		await until(() => lookedUp() !== undefined, 20_000);
		// At the next minute, not when the wait tracker comes (a minute real, 10 of the sandbox's here).
		expect(lookedUp()).toBeDefined();
		expect(Date.parse(lookedUp()!.at) - heardAt).toBeLessThan(2 * 60_000);
		// The lookup may find the job still rendering: its callback comes after all.
		await finish([lost], [lost.id]);
	} finally {
		await quiet.stop();
	}
}, 90_000);

it('a step makes the rows a free place waits for before it looks overdue jobs up: the hour’s last request makes a row, not a lookup', async () => {
	// The hour takes four bulk requests; three places. A key of its own: this file's other tests spent Pro's hour.
	const quiet = await quietN8n({ requestsPerMinute: 30, requestsPerHour: 5, concurrentJobs: 3 }, slow.keys.premium);
	try {
		// The first two render for an hour (the sandbox's): overdue and still running when the third's callback comes.
		const prompts = ['Last request clip 1 [sandbox:job-fails-timeout]', 'Last request clip 2 [sandbox:job-fails-timeout]', 'Last request clip 3', 'Last request clip 4'];
		const { ours, deliver, until, finish } = await quietBatch(quiet, prompts);
		const first = ours();
		expect(first).toHaveLength(3);
		// The third job's callback frees a place: the fourth row takes it with the hour's last request.
		const heard = first[2];
		await until(() => heard.endsAt <= slow.clock.now());
		expect((await deliver(heard.id)).status).toBe(200);
		await until(() => ours().length === 4);
		const fourth = ours().find((job) => !first.includes(job));
		expect(fourth).toBeDefined();
		// The overdue jobs were not looked up with it: the hour had no room left.
		expect(slow.journal.filter((entry) => entry.method === 'GET' && first.some((job) => entry.path.endsWith(job.id)))).toHaveLength(0);
		await finish([first[0], first[1], fourth!], [first[0].id, first[1].id]);
	} finally {
		await quiet.stop();
	}
}, 60_000);

it('a step confirms a callback that came unsigned before it makes a row waiting for the window: the confirmation is not left to a later wake', async () => {
	// One bulk request a minute: the confirmation and the second create each need a minute of their own.
	const quiet = await quietN8n({ requestsPerMinute: 2, requestsPerHour: 200, concurrentJobs: 5 });
	try {
		const prompts = ['Confirm first clip 1', 'Confirm first clip 2'];
		const { ours, deliverUnsigned, until, finish } = await quietBatch(quiet, prompts);
		const [first] = ours();
		expect(ours()).toHaveLength(1);
		await until(() => first.endsAt <= slow.clock.now());
		expect((await deliverUnsigned(first.id)).status).toBe(200);
		// The step waits in the process for each: the lookup at the next minute, the create at the one after.
		await until(() => ours().length === 2, 20_000);
		const second = ours()[1];
		expect(second).toBeDefined();
		const lookups = slow.journal.filter((entry) => entry.method === 'GET' && entry.path.endsWith(first.id));
		expect(lookups.length).toBeGreaterThan(0);
		expect(Date.parse(lookups[0].at)).toBeLessThan(second.createdAt);
		await finish([second], []);
	} finally {
		await quiet.stop();
	}
}, 90_000);

it('a step on a process that sent none of the batch’s requests counts them: it sends nothing into the minute the other process filled', async () => {
	// Four requests a minute, three of them bulk; five places. The process that parks sends three
	// creates; the next step runs on another (queue mode: another worker, with memory of its own),
	// which a service without X-RateLimit-* headers tells nothing. Counting only its own requests,
	// it sent the three rows still waiting into the same minute.
	// A key of its own, so that no earlier test's requests count in its windows; the service's
	// plan is the node's. Callbacks go nowhere but where the test delivers them.
	const plan = { requestsPerMinute: 4, requestsPerHour: 200, concurrentJobs: 5 };
	const service = await startSandbox({
		port: 0,
		speed: 10,
		insecureCallbacks: true,
		clientClock: 'sandbox',
		rateLimitHeaders: false,
		accounts: [{ id: 'acct_shared_minute', plan, balance: 100_000 }],
		keys: [{ key: 'omni_test_shared_minute', account: 'acct_shared_minute' }],
	});
	const quiet = await N8nTestInstance.start(
		{ omniVideoApi: { apiKey: 'omni_test_shared_minute', baseUrl: service.url, plan: 'custom', ...plan, webhookSecret: service.webhookSecret } },
		{ webhookUrl: 'http://127.0.0.1:9' },
	);
	quiet.waitTracker = { on: true, lateMs: 60_000 };
	try {
		const prompts = Array.from({ length: 6 }, (_, i) => `Shared minute clip ${i}`);
		const ours = () => [...service.jobs.all.values()];
		const execution = await quiet.execute(workflowOf([callbackGenerateNode({ callbackTimeoutMinutes: 120 })], {}), 'Generate', itemsOf(...prompts.map((prompt) => ({ prompt }))));
		expect(execution.status).toBe('waiting');
		const first = ours();
		expect(first).toHaveLength(3);
		jest.resetModules();
		await quiet.reloadPackage();
		const signed = handDelivered(quiet, execution.id).signed(service.webhookSecret, () => service.clock.now());
		expect((await signed(first[0].id, 0)).status).toBe(200);
		// Answered once the step began: it runs until it parks again.
		const end = Date.now() + 5_000;
		while (execution.status !== 'waiting' && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 10));
		// No create past the three, in a step that parked again within the first create's minute (6 s real at 10x).
		expect(ours()).toHaveLength(3);
		expect(service.journal.filter((entry) => entry.status === 429)).toEqual([]);
		expect(execution.status).toBe('waiting');
		expect(service.clock.now()).toBeLessThan(Math.min(...first.map((job) => job.createdAt)) + 60_000);
		expect(outputOf(execution.run!, 'Generate').map((item) => item.json.status)).toEqual(['done', 'queued', 'queued', ...Array(3).fill('waitingForPlace')]);
	} finally {
		await quiet.stop();
		await service.close();
	}
}, 60_000);
