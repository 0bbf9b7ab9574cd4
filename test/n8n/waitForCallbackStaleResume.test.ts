/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never shipped */
import type { ICredentialDataDecryptedObject, IRun, IRunExecutionData } from 'n8n-workflow';
import { startSandbox, type Sandbox } from '../../sandbox';
import { N8nTestInstance, type Execution } from '../support/n8n/instance';
import { finishedWithin } from '../support/n8n/finishedWithin';
import { workflowOf } from '../support/n8n/engine';
import { callbackGenerateNode, itemsOf, outputOf, spedUpPlan } from '../support/n8n/workflows';
import { PLANS } from '../../core/types';
import { handDelivered } from '../support/n8n/handDelivered';
import { readingOfThisRun, serviceFront, type ServiceFront } from '../support/serviceReading';

/**
 * n8n 2.x guards a resume by the execution's status alone: a webhook process that read the waiting
 * execution before another one resumed it resumes it too once that step has parked again, with the
 * data it read, and what that step recorded (the rows it made) is lost (seen on 2.8.4 in queue
 * mode: 3 creates resent in a 500-item batch). When the next step runs in the process that made
 * those rows, it finds their jobs in its memory and sends nothing. Run on the reading of the
 * service this run takes (see serviceReading.ts): on the strictest one, a create sent again is a
 * second job.
 */
const SPEED = 40;
let sandbox: Sandbox;
let front: ServiceFront;
let n8n: N8nTestInstance;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true });
	front = await serviceFront(sandbox.url, readingOfThisRun());
	const signs = sandbox.service.switches.callbackSigning === 'signed';
	n8n = await N8nTestInstance.start({
		// Two jobs at once, so that the batch's later rows are made by the steps callbacks wake.
		omniVideoApi: { apiKey: sandbox.keys.premium, baseUrl: front.url, ...spedUpPlan(PLANS.premium, SPEED), concurrentJobs: 2, webhookSecret: signs ? sandbox.webhookSecret : '' },
	});
});
afterAll(async () => {
	n8n.resumeHold = undefined;
	await n8n.stop();
	await front.close();
	await sandbox.close();
});

/** Until the execution has parked again after another resume's step, or `realMs` have passed. */
async function parkedAgain(execution: Execution, read: IRun, realMs = 10_000): Promise<boolean> {
	const until = Date.now() + realMs;
	while (Date.now() < until) {
		if (execution.status === 'waiting' && execution.run !== read) return true;
		await new Promise((resolve) => setTimeout(resolve, 5));
	}
	return false;
}

/**
 * An n8n that only the callbacks a test delivers reach (the sandbox's go nowhere), whose wakes the
 * test makes itself, each as a queue-mode worker runs it (see N8nTestInstance.waitTracker).
 */
async function quietQueueN8n(omniVideoApi: ICredentialDataDecryptedObject): Promise<N8nTestInstance> {
	const quiet = await N8nTestInstance.start({ omniVideoApi: { ...omniVideoApi, baseUrl: sandbox.url, webhookSecret: sandbox.webhookSecret } }, { webhookUrl: 'http://127.0.0.1:9' });
	quiet.waitTracker = { on: false, lateMs: 0, queueMode: true };
	return quiet;
}

/** The creates the sandbox took since journal entry `from`. */
const createsSince = (from: number) => sandbox.journal.slice(from).filter((entry) => entry.method === 'POST' && entry.path === '/api/v1/generate');

/** Holds the first resume call after it read the execution (`inHold`), until `release()`. */
function holdFirstResume(instance: N8nTestInstance): { inHold: Promise<void>; release: () => void } {
	let releaseHold: () => void = () => {};
	let entered: () => void = () => {};
	const inHold = new Promise<void>((resolve) => (entered = resolve));
	let held = 0;
	instance.resumeHold = async () => {
		if (held++ > 0) return;
		entered();
		await new Promise<void>((resolve) => (releaseHold = resolve));
	};
	return { inHold, release: () => releaseHold() };
}

/**
 * Runs four rows whose first callback is held after reading the execution, until the other one's
 * step has parked (then `whenStale` runs); checks every row ends done with one job of its own.
 */
async function withStaleResume(prompts: string[], mode: 'manual' | 'trigger', whenStale: (execution: Execution) => Promise<void> = async () => {}) {
	let held = 0;
	let stale = false;
	n8n.resumeHold = async (execution, read) => {
		if (held++ > 0) return;
		stale = await parkedAgain(execution, read);
		await whenStale(execution);
	};
	const journalFrom = sandbox.journal.length;
	const before = sandbox.jobs.all.size;
	const execution = await n8n.execute(workflowOf([callbackGenerateNode({ options: { expectedRenderSeconds: 1 } })], {}), 'Generate', itemsOf(...prompts.map((prompt) => ({ prompt }))), mode);
	const run = await finishedWithin(execution, 30_000);
	n8n.resumeHold = undefined;
	expect(stale).toBe(true);
	expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(['done', 'done', 'done', 'done']);
	const made = [...sandbox.jobs.all.values()].slice(before).map((job) => job.body.prompt);
	expect(made.sort()).toEqual([...prompts].sort());
	return { execution, creates: createsSince(journalFrom) };
}

it('a resume with data read before another step ran makes none of that step\'s rows again', async () => {
	const { creates } = await withStaleResume(['Stale one', 'Stale two', 'Stale three', 'Stale four'], 'manual');
	expect(creates).toHaveLength(4);
}, 60_000);

it('a stale resume whose step runs in another process (a queue-mode worker) sends none of the earlier step\'s creates again', async () => {
	let notedWhileParked = false;
	// A production execution (a trigger's): n8n saves the workflow's static data when it parks.
	const { execution, creates } = await withStaleResume(['Other worker one', 'Other worker two', 'Other worker three', 'Other worker four'], 'trigger', async (parked) => {
		notedWhileParked = JSON.stringify(parked.workflow.staticData).includes(parked.id);
		// The stale resume's step runs on another worker: nothing of the earlier steps in its memory.
		jest.resetModules();
		await n8n.reloadPackage();
	});
	// One create a row, on either reading: none sent to find a job another step made.
	expect(creates).toHaveLength(4);
	// The workflow kept notes of the batch's creates while it was parked, and none once it is over.
	expect(notedWhileParked).toBe(true);
	expect(JSON.stringify(execution.workflow.staticData)).not.toContain(execution.id);
}, 60_000);

describe('a stale resume back at a step this process has resumed from (two webhook processes)', () => {
	it('a callback to that process resumes the execution: it is not told to come again while the step stays put', async () => {
		// Only the callbacks below reach this n8n (the sandbox's go nowhere), and no wait time wakes it: each resume is ours.
		const quiet = await N8nTestInstance.start(
			{ omniVideoApi: { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, ...spedUpPlan(PLANS.premium, SPEED), webhookSecret: sandbox.webhookSecret } },
			{ webhookUrl: 'http://127.0.0.1:9' },
		);
		quiet.waitTracker.on = false;
		try {
			const execution = await quiet.execute(workflowOf([callbackGenerateNode({ options: { expectedRenderSeconds: 3600 } })], {}), 'Generate', itemsOf(...['Mark A', 'Mark B', 'Mark C', 'Mark D'].map((prompt) => ({ prompt }))));
			expect(execution.status).toBe('waiting');
			const ids = outputOf(execution.run!, 'Generate').map((item) => String(item.json.jobId));
			const signed = handDelivered(quiet, execution.id).signed(sandbox.webhookSecret);
			const deliver = (row: number) => signed(ids[row], row);
			/** Until the execution is parked on another run than `read`. */
			const movedFrom = async (read: IRun | undefined) => expect(await parkedAgain(execution, read!)).toBe(true);

			// Process one reads the execution at its first park, marks its resume, and is held.
			const { inHold, release } = holdFirstResume(quiet);
			const first = deliver(0);
			await inHold;
			// From here another process takes the calls and runs the steps (nothing of the first in its memory).
			jest.resetModules();
			await quiet.reloadPackage();
			// It resumes twice: the execution parks at its second, then its third step.
			let read = execution.run;
			expect((await deliver(1)).status).toBe(200);
			await movedFrom(read);
			read = execution.run;
			expect((await deliver(2)).status).toBe(200);
			await movedFrom(read);
			// The first process's resume goes on with what it read: the execution is back at its second step.
			read = execution.run;
			release();
			expect((await first).status).toBe(200);
			await movedFrom(read);

			// A callback to the second process: it resumed from "the second step" before, not from this one.
			expect((await deliver(3)).status).toBe(200);
			// The service delivers the callbacks the stale step lost again: every row ends done.
			const until = Date.now() + 20_000;
			while (execution.status !== 'success' && Date.now() < until) {
				for (const row of [1, 2]) if (execution.status === 'waiting') await deliver(row);
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
			const run = await finishedWithin(execution, 5_000);
			expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(['done', 'done', 'done', 'done']);
		} finally {
			quiet.resumeHold = undefined;
			await quiet.stop();
		}
	}, 60_000);
});

it('a step woken by wait time on a queue-mode worker keeps the notes of the rows other steps made', async () => {
	// Only the callbacks below reach this n8n; the test wakes the execution itself, as n8n's wait tracker does.
	const quiet = await quietQueueN8n({ apiKey: sandbox.keys.premium, ...spedUpPlan(PLANS.premium, SPEED), concurrentJobs: 2 });
	try {
		const journalFrom = sandbox.journal.length;
		// A production execution (a trigger's): n8n saves the workflow's static data at each park.
		const execution = await quiet.execute(workflowOf([callbackGenerateNode({ options: { expectedRenderSeconds: 1 } })], {}), 'Generate', itemsOf(...['Woken one', 'Woken two', 'Woken three', 'Woken four'].map((prompt) => ({ prompt }))), 'trigger');
		expect(execution.status).toBe('waiting');
		const ids = outputOf(execution.run!, 'Generate').map((item) => String(item.json.jobId));
		const deliver = handDelivered(quiet, execution.id).signed(sandbox.webhookSecret);

		// A webhook process reads the execution at its first park (rows 1 and 2 made) and is held.
		const { inHold, release } = holdFirstResume(quiet);
		const stale = deliver(ids[1], 1);
		stale.catch(() => undefined);
		await inHold;
		// Another process takes row 1's callback: its step makes row 3, and notes it in the workflow's static data.
		jest.resetModules();
		await quiet.reloadPackage();
		let read = execution.run;
		expect((await deliver(ids[0], 0)).status).toBe(200);
		expect(await parkedAgain(execution, read!)).toBe(true);
		// No callback comes for rows 2 and 3 (held, lost): once they are overdue, wait time wakes the
		// execution on a worker that runs on the execution's copy of the static data; it looks them
		// up and makes row 4, so that copy, noted with row 4, is saved over the workflow's.
		// (The node keeps real time here: a job is overdue 2 s after its create; the sandbox's longest render takes 90 s / SPEED.)
		await new Promise((resolve) => setTimeout(resolve, 90_000 / SPEED + 2_000));
		read = execution.run;
		await quiet.waitTimeUp(execution.id);
		expect(await parkedAgain(execution, read!)).toBe(true);
		// The held process resumes with what it read (row 3 unmade there), its step on another worker.
		jest.resetModules();
		await quiet.reloadPackage();
		release();
		expect((await stale).status).toBe(200);
		const until = Date.now() + 20_000;
		while (execution.status !== 'success' && execution.status !== 'error' && Date.now() < until) {
			if (execution.status === 'waiting') await quiet.waitTimeUp(execution.id);
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		const run = await finishedWithin(execution, 5_000);
		expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(['done', 'done', 'done', 'done']);
		// One create a row: row 3's job was found in the workflow's notes, not made again.
		expect(createsSince(journalFrom)).toHaveLength(4);
	} finally {
		quiet.resumeHold = undefined;
		await quiet.stop();
	}
}, 60_000);

it('a wake before the batch’s own moment, with data read before another step ran, sends nothing and parks again', async () => {
	// Two bulk requests an hour (real; a third is kept back): the first step makes two rows and parks until the hour has room.
	// A key of its own: the hour counts what the service says of the key, and the other tests spent Premium's.
	const quiet = await quietQueueN8n({ apiKey: sandbox.keys.pro, plan: 'custom', requestsPerMinute: 60, requestsPerHour: 3, concurrentJobs: 5 });
	try {
		const journalFrom = sandbox.journal.length;
		const prompts = ['Early wake one', 'Early wake two', 'Early wake three', 'Early wake four'];
		const execution = await quiet.execute(workflowOf([callbackGenerateNode({ options: { expectedRenderSeconds: 3600 } })], {}), 'Generate', itemsOf(...prompts.map((prompt) => ({ prompt }))), 'trigger');
		expect(execution.status).toBe('waiting');
		const read = execution.run!;
		const ids = outputOf(read, 'Generate').map((item) => String(item.json.jobId));
		expect(ids.filter((id) => id !== 'undefined')).toHaveLength(2);
		// Another process takes row 1's callback. Its own limiter has room, but it counts the batch's
		// two creates in its hour too: it makes no row, and parks again.
		jest.resetModules();
		await quiet.reloadPackage();
		expect((await handDelivered(quiet, execution.id).signed(sandbox.webhookSecret)(ids[0], 0)).status).toBe(200);
		expect(await parkedAgain(execution, read)).toBe(true);
		expect(createsSince(journalFrom)).toHaveLength(2);
		// n8n's wait tracker, on a timer from an earlier park, wakes the execution as it read it at the
		// first park, on a third process (its limiter has room too), with the static data the execution began with.
		jest.resetModules();
		await quiet.reloadPackage();
		const journalAtWake = sandbox.journal.length;
		await quiet.waitTimeUp(execution.id, read);
		expect(execution.status).toBe('waiting');
		// Before the first park's moment: nothing sent (neither a create nor a lookup).
		expect(sandbox.journal.slice(journalAtWake)).toHaveLength(0);
		expect(execution.run!.waitTill).toEqual(read.waitTill);
	} finally {
		await quiet.stop();
	}
}, 60_000);

/**
 * Four rows, two at once, on `quiet` (its wakes the test's own): row 1's callback resumes the
 * execution and its step makes row 3, while n8n's wait tracker reads the execution as that resume
 * stored it (the callback recorded, running). Once the step has parked, the wake goes ahead with
 * what it read, on another worker: the execution's copy of the static data, without the note of
 * row 3. Without the hold, row 3 is made again there (and row 4 with it): a second job on the
 * strictest reading.
 */
async function wakeMidResume(quiet: N8nTestInstance, service: Sandbox, prompts: string[], now: () => number = Date.now) {
	const journalFrom = service.journal.length;
	const creates = () => service.journal.slice(journalFrom).filter((entry) => entry.method === 'POST' && entry.path === '/api/v1/generate');
	// A production execution (a trigger's): n8n saves the workflow's static data at each park.
	const execution = await quiet.execute(workflowOf([callbackGenerateNode({ options: { expectedRenderSeconds: 3600 } })], {}), 'Generate', itemsOf(...prompts.map((prompt) => ({ prompt }))), 'trigger');
	expect(execution.status).toBe('waiting');
	const ids = outputOf(execution.run!, 'Generate').map((item) => String(item.json.jobId));
	const signed = handDelivered(quiet, execution.id).signed(service.webhookSecret, now);
	let stored: IRunExecutionData | undefined;
	quiet.resumeStored = (_, data) => (stored ??= data);
	const read = execution.run;
	expect((await signed(ids[0], 0)).status).toBe(200);
	expect(await parkedAgain(execution, read!)).toBe(true);
	quiet.resumeStored = undefined;
	expect(creates()).toHaveLength(3);
	jest.resetModules();
	await quiet.reloadPackage();
	await quiet.waitTimeUp(execution.id, { data: stored! } as IRun);
	expect(execution.status).toBe('waiting');
	expect(creates()).toHaveLength(3);
	const jobs = () => [...service.jobs.all.values()].filter((job) => prompts.includes(String(job.body.prompt)));
	/** Each job's callback, once, while the execution waits. */
	const deliverAll = async () => {
		for (const job of jobs()) {
			const until = Date.now() + 5_000;
			while (execution.status !== 'waiting' && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
			await signed(job.id, prompts.indexOf(String(job.body.prompt)));
		}
	};
	return { execution, creates, jobs, deliverAll };
}

it('a wake that read the execution while a resumed step ran (its callback recorded) sends none of that step\'s creates', async () => {
	const quiet = await quietQueueN8n({ apiKey: sandbox.keys.premium, ...spedUpPlan(PLANS.premium, SPEED), concurrentJobs: 2 });
	try {
		const prompts = ['Mid-resume one', 'Mid-resume two', 'Mid-resume three', 'Mid-resume four'];
		const { execution, creates, jobs, deliverAll } = await wakeMidResume(quiet, sandbox, prompts);
		// Row 3's callback binds its job back; later callbacks (steps that read the notes) make row 4.
		const until = Date.now() + 20_000;
		while (execution.status !== 'success' && execution.status !== 'error' && Date.now() < until) {
			await deliverAll();
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		const run = await finishedWithin(execution, 5_000);
		expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(['done', 'done', 'done', 'done']);
		expect(creates()).toHaveLength(4);
		expect(jobs()).toHaveLength(4);
	} finally {
		quiet.resumeStored = undefined;
		await quiet.stop();
	}
}, 60_000);

it('when the notes are lost after such a wake, the hold ends within its bound: a held row no callback named is in doubt, never sent', async () => {
	// The node keeps this sandbox's clock, so the hold's 5 minutes are 7.5 s here.
	const own = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true, clientClock: 'sandbox' });
	const quiet = await N8nTestInstance.start(
		{ omniVideoApi: { apiKey: own.keys.premium, baseUrl: own.url, plan: 'custom', requestsPerMinute: 60, requestsPerHour: 500, concurrentJobs: 2, webhookSecret: own.webhookSecret } },
		{ webhookUrl: 'http://127.0.0.1:9' },
	);
	quiet.waitTracker = { on: false, lateMs: 0, queueMode: true };
	try {
		const prompts = ['Lost notes one', 'Lost notes two', 'Lost notes three', 'Lost notes four'];
		const { execution, creates, deliverAll } = await wakeMidResume(quiet, own, prompts, () => own.clock.now());
		// Another execution's older copy of the static data is saved over the workflow's: the notes are gone.
		execution.workflow.staticData = {};
		// Every job's callback comes (row 3's binds its held job); steps that find no notes make nothing.
		await deliverAll();
		expect(creates()).toHaveLength(3);
		// The wait tracker wakes the execution at the hold's end: row 4 is in doubt, and the batch ends.
		quiet.waitTracker.on = true;
		if (execution.status === 'waiting') await quiet.waitTimeUp(execution.id).catch(() => undefined);
		const run = await finishedWithin(execution, 20_000);
		const items = outputOf(run, 'Generate').map((item) => item.json);
		expect(items.map((item) => item.status)).toEqual(['done', 'done', 'done', 'unknown']);
		expect(String(items[3].error)).toMatch(/^Another step of this execution, on another n8n process, may have sent this item's create/);
		expect(creates()).toHaveLength(3);
	} finally {
		quiet.resumeStored = undefined;
		await quiet.stop();
		await own.close();
	}
}, 60_000);

it('a step whose park n8n fails to note in its active executions (a wake begun as the last run ended) leaves the execution waiting, and the batch ends', async () => {
	const quiet = await quietQueueN8n({ apiKey: sandbox.keys.premium, ...spedUpPlan(PLANS.premium, SPEED), concurrentJobs: 2 });
	quiet.waitTracker.queueMode = false;
	try {
		const prompts = ['Lost active one', 'Lost active two', 'Lost active three'];
		const execution = await quiet.execute(workflowOf([callbackGenerateNode({ options: { expectedRenderSeconds: 3600 } })], {}), 'Generate', itemsOf(...prompts.map((prompt) => ({ prompt }))), 'trigger');
		expect(execution.status).toBe('waiting');
		// n8n 2.8.4: the wait time is set in the execution's data, then its list of active executions throws.
		const lost = {
			setExecutionStatus: (status: string) => {
				if (status === 'waiting') throw new Error('No active execution found');
			},
		};
		await quiet.waitTimeUp(execution.id, undefined, lost);
		expect(execution.status).toBe('waiting');
		const deliver = handDelivered(quiet, execution.id).signed(sandbox.webhookSecret);
		const jobs = () => [...sandbox.jobs.all.values()].filter((job) => prompts.includes(String(job.body.prompt)));
		const until = Date.now() + 20_000;
		while (execution.status !== 'success' && execution.status !== 'error' && Date.now() < until) {
			for (const job of jobs()) if (execution.status === 'waiting') await deliver(job.id, prompts.indexOf(String(job.body.prompt)));
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		const run = await finishedWithin(execution, 5_000);
		expect(outputOf(run, 'Generate').map((item) => item.json.status)).toEqual(['done', 'done', 'done']);
		expect(jobs()).toHaveLength(3);
	} finally {
		await quiet.stop();
	}
}, 60_000);
