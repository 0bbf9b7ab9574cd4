import { startSandbox, type Sandbox } from '../../sandbox';
import { CheckedHttp } from '../support/checkedHttp';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.close());

describe('a sandbox that reports no progress', () => {
	it('answers running and done jobs without a progress field', async () => {
		sandbox = await startSandbox({ port: 0, speed: 0, clientClock: 'sandbox', reportProgress: false, renderTimes: { seed: 1, spread: 0 } });
		const http = new CheckedHttp(sandbox.url, sandbox.keys.premium);
		const created = await http.generate({ prompt: 'no progress', resolution: '720P', duration: 4 });
		const id = (created.body as { id: string }).id;
		sandbox.clock.advance(20_000);
		const running = (await http.job(id)).body as Record<string, unknown>;
		expect(running.status).toBe('processing');
		expect(running).not.toHaveProperty('progress');
		sandbox.clock.advance(60_000);
		const done = (await http.job(id)).body as Record<string, unknown>;
		expect(done.status).toBe('done');
		expect(done).not.toHaveProperty('progress');
	});
});
