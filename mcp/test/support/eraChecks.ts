import type { Sandbox } from '../../../sandbox';
import type { McpClient } from './clients';
import { call, counts } from './mcpHarness';

/**
 * What every client kind must get from the server, on its era: the four tools, bad input refused
 * before any request, a create answered with a receipt and progress, its retry answered from the
 * records (one create). Returns every output, for the key-in-no-output check.
 */
export async function basicsHold(client: McpClient, sandbox: Sandbox, prompt: string): Promise<string[]> {
	const outputs: string[] = [];
	const { tools } = await client.listTools();
	expect(tools.map((tool) => tool.name).sort()).toEqual(['generate_video', 'get_job', 'upload_image', 'wait_for_job']);
	expect(tools.every((tool) => tool.outputSchema?.type === 'object')).toBe(true);

	const before = counts(sandbox);
	const journalBefore = sandbox.journal.length;
	const refused = await call(client, 'generate_video', { prompt, duration: 12 });
	outputs.push(JSON.stringify(refused));
	expect(refused.isError).toBe(true);
	expect(refused.text).toMatch(/duration: Duration must be/);
	// A job's schedule outlives the call whose bound ended, so earlier jobs may be looked up meanwhile:
	// the refusal itself sends nothing else.
	const sentMeanwhile = sandbox.journal.slice(journalBefore).filter((entry) => entry.path.startsWith('/api/'));
	expect(sentMeanwhile.filter((entry) => !(entry.method === 'GET' && entry.path.startsWith('/api/v1/jobs/')))).toEqual([]);

	const progress: number[] = [];
	const args = { prompt, resolution: '720P', duration: 4, waitSeconds: 1 };
	const made = await call(client, 'generate_video', args, { onprogress: (p) => progress.push(p.progress) });
	outputs.push(JSON.stringify(made));
	expect(made.isError).toBeFalsy();
	expect(made.output).toMatchObject({ jobId: expect.stringMatching(/^job_/) });
	expect(progress.length).toBeGreaterThanOrEqual(1);
	const again = await call(client, 'generate_video', args);
	outputs.push(JSON.stringify(again));
	expect(again.output).toMatchObject({ jobId: made.output.jobId, retried: true });
	expect(counts(sandbox).creates - before.creates).toBe(1);
	return outputs;
}

/**
 * A wait_for_job call the client cancels a second in stops on the server within a few seconds,
 * whichever process runs it (its line in `log()`, the logs of every process that may run it); the
 * job stays readable. Returns how long the server took to stop it after the client's cancel.
 */
export async function cancelStops(client: McpClient, prompt: string, log: () => string): Promise<number> {
	const receipt = await call(client, 'generate_video', { prompt, resolution: '4K', duration: 10, waitSeconds: 0 });
	const jobId = receipt.output.jobId as string;
	expect(jobId).toMatch(/^job_/);
	const cancelledBefore = cancelledLines(log());
	const controller = new AbortController();
	const waiting = call(client, 'wait_for_job', { jobId, waitSeconds: 30 }, { signal: controller.signal });
	waiting.catch(() => undefined);
	await new Promise((resolve) => setTimeout(resolve, 1_000));
	const cancelledAt = Date.now();
	controller.abort();
	await expect(waiting).rejects.toThrow();
	while (cancelledLines(log()) === cancelledBefore) {
		if (Date.now() - cancelledAt > 5_000) throw new Error(`the server did not stop the cancelled call within 5 s:\n${log()}`);
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	const stoppedMs = Date.now() - cancelledAt;
	const looked = await call(client, 'get_job', { jobId });
	expect(looked.output.jobId).toBe(jobId);
	return stoppedMs;
}

const cancelledLines = (log: string) => (log.match(/a wait_for_job call was cancelled by its client/g) ?? []).length;
