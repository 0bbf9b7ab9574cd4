import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../../sandbox';
import { call, counts, overStdio, RUN_ROWS, sandboxFor, serverEnv, type Connected } from './support/mcpHarness';

jest.setTimeout(90_000);

// A 1x1 PNG: what upload_image reads from an allowed folder.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

describe.each(RUN_ROWS)('the MCP server over stdio, --service %s, the %s client', (reading, _client, { client: kind }) => {
	let sandbox: Sandbox;
	let server: Connected;
	const outputs: string[] = [];
	const folder = mkdtempSync(join(tmpdir(), 'omni-video-mcp-'));

	beforeAll(async () => {
		sandbox = await sandboxFor(reading);
		writeFileSync(join(folder, 'frame.png'), PNG);
		server = await overStdio(serverEnv(sandbox, { OMNI_VIDEO_MCP_ALLOWED_DIRS: folder }), [], kind);
	});
	afterAll(async () => {
		await server?.close();
		await sandbox?.close();
		rmSync(folder, { recursive: true, force: true });
	});

	const callAndKeep = async (...args: Parameters<typeof call>) => {
		const result = await call(...args);
		outputs.push(JSON.stringify(result));
		return result;
	};

	it('lists its tools with input and output schemas and honest annotations', async () => {
		const { tools } = await server.client.listTools();
		const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
		expect(Object.keys(byName).sort()).toEqual(['generate_video', 'get_job', 'upload_image', 'wait_for_job']);
		for (const tool of tools) {
			expect(tool.inputSchema.type).toBe('object');
			expect(tool.outputSchema?.type).toBe('object');
			expect(tool.description?.length).toBeGreaterThan(80);
		}
		expect(byName.generate_video.inputSchema.required).toEqual(['prompt']);
		expect(byName.generate_video.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
		expect(byName.get_job.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
		expect(byName.wait_for_job.annotations).toMatchObject({ readOnlyHint: true });
		expect(Object.keys(byName.upload_image.inputSchema.properties ?? {}).sort()).toEqual(['path', 'url']);
	});

	it('makes a video end to end: an image uploaded, animated, answered as URLs and a video/mp4 resource_link', async () => {
		const uploaded = await callAndKeep(server.client, 'upload_image', { path: join(folder, 'frame.png') });
		expect(uploaded.isError).toBeFalsy();
		const imageUrl = uploaded.output.fileUrl as string;
		const made = await callAndKeep(server.client, 'generate_video', { prompt: 'A paper boat in the rain', imageUrl, resolution: '720P', duration: 4, waitSeconds: 40 });
		expect(made.isError).toBeFalsy();
		expect(made.output).toMatchObject({ status: 'done', jobId: expect.stringMatching(/^job_/), videoUrl: expect.stringContaining('/output.mp4') });
		const links = made.content.filter((item) => item.type === 'resource_link');
		expect(links).toEqual([expect.objectContaining({ uri: made.output.videoUrl, mimeType: 'video/mp4' })]);
		// Never the MP4 inline: text and links only.
		expect(made.content.every((item) => item.type === 'text' || item.type === 'resource_link')).toBe(true);
		const video = await fetch(made.output.videoUrl as string);
		expect(video.headers.get('content-type')).toBe('video/mp4');
	});

	it('returns a receipt inside a short bound, with progress, and get_job / wait_for_job finish it', async () => {
		const before = counts(sandbox);
		const progress: Array<{ progress: number; message?: string }> = [];
		const started = Date.now();
		const receipt = await callAndKeep(server.client, 'generate_video', { prompt: 'A long slow pan over hills', resolution: '4K', duration: 10, waitSeconds: 2 }, { onprogress: (p) => progress.push(p) });
		const tookMs = Date.now() - started;
		expect(receipt.isError).toBeFalsy();
		expect(receipt.output).toMatchObject({ jobId: expect.stringMatching(/^job_/) });
		expect(tookMs).toBeLessThan(3_500);
		expect(receipt.output).toMatchObject({ status: expect.stringMatching(/^(queued|running)$/), jobId: expect.stringMatching(/^job_/), nextStep: { tool: 'wait_for_job' } });
		expect(receipt.text).toContain('wait_for_job');
		expect(progress.length).toBeGreaterThanOrEqual(2);
		expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
		const jobId = receipt.output.jobId as string;
		const looked = await callAndKeep(server.client, 'get_job', { jobId });
		expect(looked.output.jobId).toBe(jobId);
		const done = await callAndKeep(server.client, 'wait_for_job', { jobId, waitSeconds: 40 });
		expect(done.output).toMatchObject({ status: 'done', jobId });
		expect(counts(sandbox).creates - before.creates).toBe(1);
	});

	it('stops when the client cancels: no further lookups, and the job stays readable', async () => {
		const controller = new AbortController();
		let jobId: string | undefined;
		const calling = call(server.client, 'generate_video', { prompt: 'A lighthouse at night', resolution: '4K', duration: 10, waitSeconds: 40 }, {
			signal: controller.signal,
			onprogress: (p) => {
				const seen = /Job (job_\S+)/.exec(p.message ?? '');
				if (seen && !jobId) {
					jobId = seen[1];
					controller.abort();
				}
			},
		});
		await expect(calling).rejects.toThrow();
		expect(jobId).toBeDefined();
		const lookupsOf = () => sandbox.journal.filter((entry) => entry.method === 'GET' && entry.path.endsWith(`/${jobId}`)).length;
		const atCancel = lookupsOf();
		await new Promise((resolve) => setTimeout(resolve, 5_000));
		expect(lookupsOf()).toBe(atCancel);
		const looked = await callAndKeep(server.client, 'get_job', { jobId });
		expect(looked.output.jobId).toBe(jobId);
	});

	it('refuses bad input naming the field, before any request', async () => {
		const before = counts(sandbox).requests;
		const longDuration = await callAndKeep(server.client, 'generate_video', { prompt: 'A fox', duration: 12 });
		expect(longDuration.isError).toBe(true);
		expect(longDuration.text).toMatch(/duration: Duration must be/);
		const blank = await callAndKeep(server.client, 'generate_video', { prompt: '  ', imageUrl: 'https://a.example/x.png', videoUrl: 'https://a.example/y.mp4' });
		expect(blank.isError).toBe(true);
		expect(blank.text).toMatch(/prompt: /);
		expect(blank.text).toMatch(/videoUrl|imageUrl/);
		const wrongType = await callAndKeep(server.client, 'generate_video', { prompt: 7 });
		expect(wrongType.isError).toBe(true);
		expect(wrongType.text).toContain('prompt');
		const noJob = await callAndKeep(server.client, 'get_job', { jobId: 'job with spaces' });
		expect(noJob.isError).toBe(true);
		expect(noJob.text).toContain('jobId');
		const outside = await callAndKeep(server.client, 'upload_image', { path: '/etc/hostname' });
		expect(outside.isError).toBe(true);
		expect(outside.text).toContain('path');
		expect(counts(sandbox).requests).toBe(before);
	});

	it('a retried call whose answer was lost gets the job already made; newVideo and a new requestId make new ones', async () => {
		const args = { prompt: 'A heron takes off', resolution: '720P', duration: 4, waitSeconds: 30 };
		const before = counts(sandbox);
		// The client gives up after 1 s (its timeout) and cancels; the server had already created the job.
		await expect(server.client.callTool({ name: 'generate_video', arguments: args }, { timeout: 1_000 })).rejects.toThrow(/timed out/i);
		const retried = await callAndKeep(server.client, 'generate_video', args);
		expect(retried.isError).toBeFalsy();
		expect(retried.output).toMatchObject({ retried: true, status: 'done' });
		expect(counts(sandbox).creates - before.creates).toBe(1);
		expect(counts(sandbox).jobs - before.jobs).toBe(1);

		const again = await callAndKeep(server.client, 'generate_video', args);
		expect(again.output.jobId).toBe(retried.output.jobId);
		const deliberate = await callAndKeep(server.client, 'generate_video', { ...args, newVideo: true });
		expect(deliberate.output.jobId).not.toBe(retried.output.jobId);
		expect(deliberate.output.requestId).toEqual(expect.stringMatching(/^new_/));
		const named = await callAndKeep(server.client, 'generate_video', { ...args, requestId: 'campaign-7' });
		const namedAgain = await callAndKeep(server.client, 'generate_video', { ...args, requestId: 'campaign-7' });
		expect(namedAgain.output.jobId).toBe(named.output.jobId);
		expect(new Set([retried.output.jobId, deliberate.output.jobId, named.output.jobId]).size).toBe(3);
		expect(counts(sandbox).jobs - before.jobs).toBe(3);
	});

	it('a create whose answer from the service was lost is never sent again: the call says what to check', async () => {
		const args = { prompt: 'A cut connection [sandbox:reset-after-accept]', resolution: '720P', duration: 4, waitSeconds: 5 };
		const before = counts(sandbox);
		const first = await callAndKeep(server.client, 'generate_video', args);
		expect(first.isError).toBe(true);
		const again = await callAndKeep(server.client, 'generate_video', args);
		expect(again.isError).toBe(true);
		expect(again.text).toContain('dashboard');
		expect(again.text).toContain('newVideo: true');
		// The service made one job (and charged it); nothing was sent for the retry.
		expect(counts(sandbox).creates - before.creates).toBe(1);
		expect(counts(sandbox).jobs - before.jobs).toBe(1);
	});

	it('keeps its records on disk by default: a restarted server answers a retry with the job made before', async () => {
		// Nothing set but where the platform's state folder is ($XDG_STATE_HOME).
		const env = serverEnv(sandbox, { XDG_STATE_HOME: folder });
		delete env.OMNI_VIDEO_MCP_STATE_DIR;
		const args = { prompt: 'A kingfisher dives', resolution: '720P', duration: 4, waitSeconds: 0 };
		const first = await overStdio(env, [], kind);
		const made = await call(first.client, 'generate_video', args);
		await first.close();
		const before = counts(sandbox);
		const second = await overStdio(env, [], kind);
		const retried = await call(second.client, 'generate_video', args);
		await second.close();
		expect(retried.output).toMatchObject({ jobId: made.output.jobId, retried: true });
		expect(counts(sandbox).creates).toBe(before.creates);
		expect(first.log()).toContain(join(folder, 'omni-video-mcp'));
	});

	it('refuses a create that would pass the spend cap, saying so, with nothing sent', async () => {
		// 720P at 4 s costs 20 credits in the sandbox: the cap leaves room for one.
		const capped = await overStdio(serverEnv(sandbox, { OMNI_VIDEO_SPEND_CAP_CREDITS: '30', OMNI_VIDEO_SPEND_CAP_HOURS: '1' }), [], kind);
		try {
			const first = await call(capped.client, 'generate_video', { prompt: 'A cap test', resolution: '720P', duration: 4, waitSeconds: 0 });
			expect(first.isError).toBeFalsy();
			const before = counts(sandbox).creates;
			const second = await call(capped.client, 'generate_video', { prompt: 'Another cap test', resolution: '720P', duration: 4, waitSeconds: 0 });
			expect(second.isError).toBe(true);
			expect(second.text).toMatch(/spend cap is 30 credits per 1 h, 20 are spent/);
			expect(second.text).toContain('OMNI_VIDEO_SPEND_CAP_CREDITS');
			expect(counts(sandbox).creates).toBe(before);
			// A retry of the first is no new spend: it is answered from the records.
			const retry = await call(capped.client, 'generate_video', { prompt: 'A cap test', resolution: '720P', duration: 4, waitSeconds: 0 });
			expect(retry.output).toMatchObject({ jobId: first.output.jobId });
		} finally {
			await capped.close();
		}
	});

	it('never shows the key: not in any result, nor in its log', () => {
		expect(outputs.length).toBeGreaterThan(10);
		const everything = outputs.join('\n') + server.log();
		expect(everything).not.toContain(sandbox.keys.pro);
	});
});

describe('the MCP server with no base URL', () => {
	it('starts, lists its tools, and every call says what to set', async () => {
		const server = await overStdio({ PATH: process.env.PATH ?? '', OMNI_VIDEO_MCP_STATE_DIR: 'none' });
		try {
			const { tools } = await server.client.listTools();
			expect(tools).toHaveLength(4);
			const result = await call(server.client, 'get_job', { jobId: 'job_1' });
			expect(result.isError).toBe(true);
			expect(result.text).toContain('OMNI_VIDEO_BASE_URL');
			expect(server.log()).toContain('OMNI_VIDEO_BASE_URL is not set');
		} finally {
			await server.close();
		}
	});
});
