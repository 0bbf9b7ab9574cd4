import { startSandbox, type Sandbox } from '../../sandbox';
import { CheckedHttp } from '../support/checkedHttp';
import { eventually } from '../support/receiver';

describe('sandbox limits', () => {
	let sandbox: Sandbox;
	beforeEach(async () => {
		sandbox = await startSandbox({
			port: 0,
			speed: 1,
			accounts: [
				{ id: 'acct_pro', plan: 'pro', balance: 100_000 },
				{ id: 'acct_tiny', plan: { requestsPerMinute: 100, requestsPerHour: 5, concurrentJobs: 2 }, balance: 100_000 },
				{ id: 'acct_poor', plan: 'premium', balance: 100 },
			],
			keys: [
				{ key: 'omni_test_pro', account: 'acct_pro' },
				{ key: 'omni_test_pro_2', account: 'acct_pro' },
				{ key: 'omni_test_tiny', account: 'acct_tiny' },
				{ key: 'omni_test_budget', account: 'acct_pro', budget: 200 },
				{ key: 'omni_test_poor', account: 'acct_poor' },
			],
		});
	});
	afterEach(() => sandbox.close());

	it('refuses the 31st request of a minute on Pro with 429 rate_limited, Retry-After and headers', async () => {
		const http = new CheckedHttp(sandbox.url, 'omni_test_pro');
		for (let i = 0; i < 30; i++) {
			const response = await http.job('job_credential_check');
			expect(response.status).toBe(404);
			expect(response.headers['x-ratelimit-remaining']).toBe(String(29 - i));
		}
		const refused = await http.job('job_credential_check');
		expect(refused.status).toBe(429);
		expect(refused.body).toMatchObject({ error: { code: 'rate_limited' } });
		expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(59);
		expect(refused.headers['x-ratelimit-limit']).toBe('30');
		expect(refused.headers['x-ratelimit-remaining']).toBe('0');
		// Windows are per key: another key of the same account still has its own.
		expect((await new CheckedHttp(sandbox.url, 'omni_test_pro_2').job('job_credential_check')).status).toBe(404);
		sandbox.clock.advance(61_000);
		expect((await http.job('job_credential_check')).status).toBe(404);
	});

	it('refuses past the hour window and reports the hour limit', async () => {
		const http = new CheckedHttp(sandbox.url, 'omni_test_tiny');
		for (let i = 0; i < 5; i++) expect((await http.job('job_x')).status).toBe(404);
		const refused = await http.job('job_x');
		expect(refused.status).toBe(429);
		expect(refused.headers['x-ratelimit-limit']).toBe('5');
		expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3_500);
		sandbox.clock.advance(3_601_000);
		expect((await http.job('job_x')).status).toBe(404);
	});

	it('refuses a create over the account concurrency with 429 concurrency_limited until a job ends', async () => {
		const http = new CheckedHttp(sandbox.url, 'omni_test_tiny');
		expect((await http.generate({ prompt: 'one', resolution: '720P', duration: 4 })).status).toBe(202);
		expect((await http.generate({ prompt: 'two', resolution: '4K', duration: 10 })).status).toBe(202);
		const refused = await http.generate({ prompt: 'three' });
		expect(refused.status).toBe(429);
		expect(refused.body).toMatchObject({ error: { code: 'concurrency_limited' } });
		// Retry-After says when the first job ends, as the sandbox drew its render time.
		const firstEnd = Math.min(...[...sandbox.jobs.all.values()].map((job) => job.endsAt));
		const untilFirstEnd = Math.ceil((firstEnd - sandbox.clock.now()) / 1000);
		expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(untilFirstEnd - 1);
		expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(untilFirstEnd);
		sandbox.clock.advance(untilFirstEnd * 1000 + 1_000);
		expect((await http.generate({ prompt: 'three' })).status).toBe(202);
	});

	it('reserves credits on create, settles on done, releases on failure', async () => {
		const http = new CheckedHttp(sandbox.url, 'omni_test_pro');
		const account = () => sandbox.accounts.accounts.get('acct_pro');
		const ok = await http.generate({ prompt: 'ok', duration: 4 });
		const bad = await http.generate({ prompt: 'bad [sandbox:job-fails-internal]', duration: 4 });
		expect(account()).toMatchObject({ balance: 100_000, reserved: 80 });
		sandbox.clock.advance(91_000); // every job has ended by 90 s
		expect(account()).toMatchObject({ balance: 99_960, reserved: 0 });
		expect((await http.job((ok.body as { id: string }).id)).body).toMatchObject({ status: 'done', creditsUsed: 40 });
		expect((await http.job((bad.body as { id: string }).id)).body).toMatchObject({ status: 'failed', creditsUsed: 0 });
	});

	it('answers 402 key_budget_exceeded and insufficient_credits, never 429, and creates nothing', async () => {
		const budget = new CheckedHttp(sandbox.url, 'omni_test_budget');
		expect((await budget.generate({ prompt: 'a' })).status).toBe(202); // 80
		expect((await budget.generate({ prompt: 'b' })).status).toBe(202); // 160
		const over = await budget.generate({ prompt: 'c' });
		expect(over.status).toBe(402);
		expect(over.body).toMatchObject({ error: { code: 'key_budget_exceeded' } });
		const poor = await new CheckedHttp(sandbox.url, 'omni_test_poor').generate({ prompt: 'd', resolution: '4K', duration: 10 });
		expect(poor.status).toBe(402);
		expect(poor.body).toMatchObject({ error: { code: 'insufficient_credits' } });
		expect(sandbox.jobs.all.size).toBe(2);
		// Once the reservations settle, a released failure frees the budget again.
		await eventually(() => (sandbox.accounts.accounts.get('acct_pro')?.reserved === 160 ? true : undefined));
	});
});
