/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- a command-line demo for people; never shipped */
/**
 * `npm run demo`: the main job end to end. Generates a video from a prompt, waits for it the way
 * the plugins do (a signed callback, confirmed; polling as the fallback), and downloads the MP4.
 *
 * With no settings it runs against the embedded sandbox (sped up 20×). Set OMNI_VIDEO_BASE_URL and
 * OMNI_VIDEO_API_KEY (and optionally OMNI_VIDEO_WEBHOOK_SECRET, OMNI_VIDEO_PLAN=pro|premium) to
 * run it against a real service instead; then it polls, since a callback needs a public URL.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { startSandbox, type Sandbox } from '../sandbox';
import { createNodeClient } from '../node-host/runtime';
import type { JobRecord } from '../core/types';
import type { OmniVideoClient } from '../core/client';

const SPEED = 20;
const OUTPUT_DIR = join(process.cwd(), 'demo-output');

/** A local endpoint that hands each callback to core and resolves with the confirmed job. */
async function callbackReceiver(client: OmniVideoClient, secret: string) {
	const waiting = new Map<string, (job: JobRecord) => void>();
	const server = http.createServer((req, res) => {
		let body = '';
		req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
		req.on('end', () => {
			void client
				.handleCallback({ headers: req.headers as Record<string, string>, rawBody: body, secret })
				.then((outcome) => {
					res.writeHead(outcome.accepted ? 200 : outcome.status).end();
					if (outcome.accepted) waiting.get(outcome.job.id)?.(outcome.job);
				});
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/omni-callback`,
		jobDone: (jobId: string) => new Promise<JobRecord>((resolve) => waiting.set(jobId, resolve)),
		close: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

async function download(url: string, jobId: string): Promise<string> {
	await mkdir(OUTPUT_DIR, { recursive: true });
	const file = join(OUTPUT_DIR, `${jobId}.mp4`);
	const response = await fetch(url);
	if (!response.ok || !response.body) throw new Error(`Download failed: ${response.status}`);
	await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), createWriteStream(file));
	return file;
}

function line(label: string, value: unknown): void {
	console.log(`  ${label.padEnd(16)} ${value}`);
}

async function main(): Promise<void> {
	const external = process.env.OMNI_VIDEO_BASE_URL && process.env.OMNI_VIDEO_API_KEY;
	let sandbox: Sandbox | undefined;
	if (!external) sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true });
	const baseUrl = sandbox?.url ?? (process.env.OMNI_VIDEO_BASE_URL as string);
	const apiKey = sandbox?.keys.pro ?? (process.env.OMNI_VIDEO_API_KEY as string);
	const plan = process.env.OMNI_VIDEO_PLAN === 'premium' ? 'premium' : 'pro';
	const client = createNodeClient({ baseUrl, apiKey, plan });
	console.log(sandbox ? `Omni Video demo against the embedded sandbox ${baseUrl} (speed ×${SPEED})\n` : `Omni Video demo against ${baseUrl}\n`);

	const prompt = 'A paper boat sailing down a rainy street at dusk, cinematic';
	let job: JobRecord;
	const started = Date.now();
	if (sandbox) {
		const receiver = await callbackReceiver(client, sandbox.webhookSecret);
		const created = await client.generateVideo(
			{ prompt, resolution: '1080P', duration: 6, callbackUrl: receiver.url },
			{ allowInsecureLoopbackCallback: true },
		);
		console.log(`Created ${created.job.id} (${created.mode}, ${created.job.creditsQueued} credits reserved); waiting for its signed callback…`);
		job = await receiver.jobDone(created.job.id);
		await receiver.close();
	} else {
		const created = await client.generateVideo({ prompt, resolution: '720P', duration: 4 });
		console.log(`Created ${created.job.id}; polling on the core schedule (first look near ${created.expectedMs / 1000} s)…`);
		job = await client.waitForJob(created.job.id, { expectedMs: created.expectedMs });
	}
	const file = await download(job.resultUrls[0], job.id);

	console.log('\nDone.');
	line('job', job.id);
	line('status', job.status);
	line('credits used', job.creditsUsed);
	line('video URL', job.resultUrls[0]);
	line('saved to', file);
	line('took', `${((Date.now() - started) / 1000).toFixed(1)} s`);
	if (sandbox) {
		const apiCalls = sandbox.journal.filter((e) => e.path.startsWith('/api/'));
		line('API requests', `${apiCalls.length} (${apiCalls.map((e) => `${e.method} ${e.path.replace(job.id, ':id')}`).join(', ')})`);
		await sandbox.close();
	}
}

main().catch((error: unknown) => {
	console.error(`\nThe demo failed: ${(error as Error).message}`);
	process.exit(1);
});
