/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never shipped */
import { hostSleep } from '../../nodes/shared/hostSleep';

// Runs on the pinned n8n-workflow (1.x: sleep ignores a signal) and on the newest (2.34+: sleep
// takes one, sleepWithAbort is gone): the node's waits stop on abort on both.
describe("the node's sleep on the host's n8n-workflow", () => {
	it('waits the time it is given', async () => {
		const started = Date.now();
		await hostSleep(30);
		expect(Date.now() - started).toBeGreaterThanOrEqual(25);
	});

	it('rejects as soon as its signal aborts, long before the time runs out', async () => {
		const controller = new AbortController();
		const started = Date.now();
		const waiting = hostSleep(60_000, controller.signal);
		setTimeout(() => controller.abort(new Error('cancelled by the test')), 20);
		await expect(waiting).rejects.toThrow('cancelled by the test');
		expect(Date.now() - started).toBeLessThan(10_000);
	});

	it('rejects at once on a signal aborted before', async () => {
		await expect(hostSleep(60_000, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
	});
});
