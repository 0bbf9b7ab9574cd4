import { inProcessContext, NO_AUTH, READINGS, sandboxFor } from './support/mcpHarness';

jest.setTimeout(60_000);

/**
 * The only call waiting on a job is cancelled (its client timed out) and the agent retries at once:
 * CI met the retry joining the schedule being stopped, and answering "queued" at once instead of
 * waiting for the video.
 */
describe.each(READINGS)('a job schedule stopped by its only call, then joined again at once, --service %s', (reading) => {
	it('the new call gets a schedule of its own that runs to the job’s end', async () => {
		const sandbox = await sandboxFor(reading);
		try {
			const context = inProcessContext(sandbox);
			const connection = context.connect(NO_AUTH);
			const { job } = await connection.client.generateVideo({ prompt: 'A gull over the pier', resolution: '720P', duration: 4 });
			const first = await context.watches.watch(connection, job, { expectedMs: 6_000 });
			first.join(() => undefined).leave(true);
			first.ended.catch(() => undefined);
			const again = await context.watches.watch(connection, job, { expectedMs: 6_000 });
			expect(again).not.toBe(first);
			again.join(() => undefined);
			await expect(again.ended).resolves.toMatchObject({ id: job.id, status: 'done' });
			// The stopped schedule's end did not take the new one's place.
			expect(context.watches.running(job.id)).toBeUndefined();
		} finally {
			await sandbox.close();
		}
	});
});
