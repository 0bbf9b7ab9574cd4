import { closeCoreSandboxes, coreSandbox, refused429 } from '../support/coreHarness';

afterEach(closeCoreSandboxes);

const ONE_AT_A_TIME = { requestsPerMinute: 60, requestsPerHour: 1_000, concurrentJobs: 1 };
/** 720P, 4 s: core expects 30 s, the sandbox renders it in its typical 34.8 s. */
const SMALL = { resolution: '720P', duration: 4 } as const;

describe('job slots held by jobs nobody here watches', () => {
	it("looks an overdue Don't Wait job up instead of waiting out its whole hold before the next create", async () => {
		const { time, sandbox, sent, client } = await coreSandbox({ limits: ONE_AT_A_TIME });
		const first = await time.run(client.generateVideo({ prompt: 'first', ...SMALL }));
		await time.run(client.generateVideo({ prompt: 'second', ...SMALL }));
		const firstJob = sandbox.jobs.all.get(first.job.id)!;
		const [, secondCreate] = sent.creates();
		// Without the lookup the second create waits for the first job's hold: 95 s after its create.
		// With it, the create follows the first job's end within one lookup interval (10 s).
		expect(secondCreate.at).toBeGreaterThanOrEqual(firstJob.endsAt);
		expect(secondCreate.at - firstJob.endsAt).toBeLessThanOrEqual(10_000);
		// A look at its expected end (30 s, still rendering), then one 10 s later (ended).
		expect(sent.lookups().map((request) => request.url)).toEqual([
			expect.stringContaining(first.job.id),
			expect.stringContaining(first.job.id),
		]);
		expect(refused429(sandbox)).toHaveLength(0);
	});

	it('spends no lookup on a job this process watches: its end frees the slot when seen', async () => {
		const { time, sandbox, sent, client } = await coreSandbox({ limits: ONE_AT_A_TIME });
		const first = await time.run(client.generateVideo({ prompt: 'watched', ...SMALL }, { watched: true }));
		const next = client.generateVideo({ prompt: 'next', ...SMALL });
		// Well past its expected end (30 s) and its real end (34.8 s): the waiting create looks nothing up.
		await time.advance(60_000);
		expect(sent.lookups()).toHaveLength(0);
		expect(sent.creates()).toHaveLength(1);
		// Whoever watches it (a poller, a callback) sees it ended: the waiting create goes at once.
		const seenAt = time.clock.now();
		const [seen] = await time.run(Promise.all([client.getJob(first.job.id), next]));
		expect(seen.status).toBe('done');
		expect(sent.lookups()).toHaveLength(1);
		expect(sent.creates()[1].at - seenAt).toBeLessThanOrEqual(1_000);
		expect(refused429(sandbox)).toHaveLength(0);
	});

	it('looks nothing up while waiting when its caller schedules the lookups itself: the create waits out the hold', async () => {
		// A Wait for Callback batch whose rows the hour holds back: each lookup puts a create off.
		// Measured on real n8n in queue mode (500 items on Premium): creates waiting in a step sent 3
		// lookups in the first hour, 27 to 36 s before their jobs ended; 2 creates went past its end.
		const { time, sandbox, sent, client } = await coreSandbox({ limits: ONE_AT_A_TIME });
		const first = await time.run(client.generateVideo({ prompt: 'first', ...SMALL }));
		await time.run(client.generateVideo({ prompt: 'second', ...SMALL }, { lookUpWhileWaiting: false }));
		const [firstCreate, secondCreate] = sent.creates();
		expect(sent.lookups()).toHaveLength(0);
		// The first job's hold: as long as a job of its size can take (95 s).
		expect(secondCreate.at - firstCreate.at).toBeGreaterThanOrEqual(95_000);
		expect(sandbox.jobs.all.get(first.job.id)!.endsAt).toBeLessThan(secondCreate.at);
		expect(refused429(sandbox)).toHaveLength(0);
	});

	it('spends no lookup while a create waits only for the answer to the one before it, its place free', async () => {
		// The process knows one place is its own (its Don't Wait job); the plan has three. The next
		// create reaches past it (a probe): the create after it waits for that answer, a request's time.
		// Looking the overdue job up then cannot bring a place sooner, and spends a request of the
		// hour: on real n8n in queue mode, waiting creates sent 2 to 4 lookups in the first hour of a
		// 500-item Wait for Callback batch, each putting one of its creates past the hour's end.
		const { time, sandbox, sent, client } = await coreSandbox({ limits: { ...ONE_AT_A_TIME, concurrentJobs: 3 } });
		await time.run(client.generateVideo({ prompt: 'earlier', ...SMALL }));
		// Past its expected end (30 s), still holding its place here (nobody watches it).
		await time.advance(40_000);
		await time.run(Promise.all([client.generateVideo({ prompt: 'probe', ...SMALL }), client.generateVideo({ prompt: 'after the probe', ...SMALL })]));
		expect(sent.creates()).toHaveLength(3);
		expect(sent.lookups()).toHaveLength(0);
		expect(refused429(sandbox)).toHaveLength(0);
	});

	it('counts a polled job as watched once its poller starts, though it was created unwatched', async () => {
		const { time, sent, client } = await coreSandbox({ limits: ONE_AT_A_TIME });
		const first = await time.run(client.generateVideo({ prompt: 'polled', ...SMALL }));
		const next = client.generateVideo({ prompt: 'next', ...SMALL });
		const [done] = await time.run(Promise.all([client.waitForJob(first.job.id, { expectedMs: first.expectedMs }), next]));
		expect(done.status).toBe('done');
		// Every lookup is the poller's: none two at one instant, and none after the job was seen done.
		const times = sent.lookups().map((request) => request.at);
		expect(new Set(times).size).toBe(times.length);
		expect(sent.lookups().at(-1)?.response?.body).toMatchObject({ status: 'done' });
	});
});

describe('places free now', () => {
	it('counts the plan’s places less the jobs and creates in flight here, and none during a pause', async () => {
		const { time, client } = await coreSandbox({ limits: { ...ONE_AT_A_TIME, concurrentJobs: 3 } });
		expect(client.freeJobSlots()).toBe(3);
		await time.run(client.generateVideo({ prompt: 'one', ...SMALL }));
		expect(client.freeJobSlots()).toBe(2);
		client.runtime.limiter.concurrencyRefused(5_000);
		expect(client.freeJobSlots()).toBe(0);
	});
});
