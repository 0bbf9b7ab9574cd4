/* eslint-disable no-console -- a CI check that reports what the Inspector printed */
/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`, a real client, under Node 22)
 * against the built server and the sandbox, on both readings of the service, over stdio and over
 * Streamable HTTP. mcp/ci.sh installs the Inspector and Node 22 and passes INSPECTOR (its launcher).
 * Each check throws with what the Inspector printed; the figures go to stdout for the CI log.
 */
import { execFile } from 'node:child_process';
import assert from 'node:assert/strict';
import { counts, CLI, EXPECTED_RENDER_SECONDS, httpServer, READINGS, sandboxFor, serverEnv, type Reading } from '../support/mcpHarness';

const INSPECTOR = process.env.INSPECTOR ?? '';
/** The Inspector exits 5 when a tool answers isError. */
const TOOL_ERROR_EXIT = 5;

interface Printed {
	code: number;
	stdout: string;
	stderr: string;
	ms: number;
	json?: { structuredContent?: Record<string, unknown>; isError?: boolean; tools?: Array<{ name: string; inputSchema: unknown; outputSchema?: unknown }> };
}

function inspector(args: string[]): Promise<Printed> {
	const started = Date.now();
	return new Promise((resolve) => {
		execFile('node', [INSPECTOR, '--cli', ...args], { timeout: 90_000, maxBuffer: 10 * 1024 * 1024 }, (error, stdout, stderr) => {
			const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
			let json: Printed['json'];
			try {
				json = JSON.parse(stdout);
			} catch {
				json = undefined;
			}
			resolve({ code, stdout, stderr, ms: Date.now() - started, json });
		});
	});
}

async function onReading(reading: Reading): Promise<void> {
	const sandbox = await sandboxFor(reading);
	const env = serverEnv(sandbox);
	const printed: string[] = [];
	const keep = (result: Printed) => {
		printed.push(result.stdout, result.stderr);
		return result;
	};
	const stdio = (method: string, extra: string[] = []) =>
		inspector([...Object.entries(env).flatMap(([name, value]) => ['-e', `${name}=${value}`]), 'node', CLI, '--method', method, ...extra]).then(keep);
	try {
		const listed = await stdio('tools/list');
		assert.equal(listed.code, 0, listed.stderr);
		const names = (listed.json?.tools ?? []).map((tool) => tool.name).sort();
		assert.deepEqual(names, ['generate_video', 'get_job', 'upload_image', 'wait_for_job']);
		for (const tool of listed.json?.tools ?? []) assert.ok(tool.inputSchema && tool.outputSchema, `${tool.name} has both schemas`);

		// A long job (4K, 10 s) with a 2 s bound: a receipt, not an error, then wait_for_job ends it.
		const long = await stdio('tools/call', ['--tool-name', 'generate_video', '--tool-arg', 'prompt=A slow pan over a harbour', 'resolution=4K', 'duration=10', 'waitSeconds=2']);
		assert.equal(long.code, 0, long.stdout + long.stderr);
		const receipt = long.json?.structuredContent ?? {};
		assert.match(String(receipt.status), /^(queued|running)$/);
		assert.equal((receipt.nextStep as { tool?: string })?.tool, 'wait_for_job');
		const jobId = String(receipt.jobId);
		const finished = await stdio('tools/call', ['--tool-name', 'wait_for_job', '--tool-arg', `jobId=${jobId}`, 'waitSeconds=40']);
		assert.equal(finished.code, 0, finished.stdout + finished.stderr);
		assert.equal(finished.json?.structuredContent?.status, 'done');
		assert.match(finished.stdout, /"mimeType": "video\/mp4"/);

		// Bad input: the Inspector's tool-error exit, the field named, nothing sent.
		const before = counts(sandbox).requests;
		const bad = await stdio('tools/call', ['--tool-name', 'generate_video', '--tool-arg', 'prompt=A fox', 'duration=12']);
		assert.equal(bad.code, TOOL_ERROR_EXIT, bad.stdout + bad.stderr);
		assert.match(bad.stdout, /duration: Duration must be/);
		assert.equal(counts(sandbox).requests, before);

		// Over HTTP, the key as the bearer header: the same call twice (an agent retrying) is one job.
		const { OMNI_VIDEO_API_KEY: _key, ...keyless } = env;
		let madeByRepeat = 0;
		const server = await httpServer(keyless);
		try {
			const http = (extra: string[]) => inspector([server.url, '--transport', 'http', '--header', `Authorization: Bearer ${sandbox.keys.pro}`, '--method', 'tools/call', ...extra]).then(keep);
			const args = ['--tool-name', 'generate_video', '--tool-arg', 'prompt=A red kite', 'resolution=720P', 'duration=4', 'waitSeconds=30'];
			const creates = counts(sandbox).creates;
			const first = await http(args);
			const again = await http(args);
			assert.equal(first.code, 0, first.stdout + first.stderr);
			assert.equal(first.json?.structuredContent?.status, 'done');
			assert.equal(again.json?.structuredContent?.jobId, first.json?.structuredContent?.jobId);
			assert.equal(again.json?.structuredContent?.retried, true);
			madeByRepeat = counts(sandbox).creates - creates;
			assert.equal(madeByRepeat, 1);
			printed.push(server.log());
		} finally {
			await server.stop();
		}

		assert.ok(!printed.join('\n').includes(sandbox.keys.pro), 'the key appears in no output');
		const shown = { status: receipt.status, jobId: receipt.jobId, nextStep: receipt.nextStep, message: receipt.message };
		console.log(`--service ${reading}: the Inspector CLI printed for a long job after ${(long.ms / 1000).toFixed(1)} s (bound 2 s, expected render ${EXPECTED_RENDER_SECONDS} s): ${JSON.stringify(shown)}`);
		console.log(`--service ${reading}: wait_for_job then printed status ${finished.json?.structuredContent?.status} after ${(finished.ms / 1000).toFixed(1)} s; bad input exit ${bad.code} with 0 requests; the same HTTP call twice made ${madeByRepeat} job; the key in no output`);
	} finally {
		await sandbox.close();
	}
}

async function main(): Promise<void> {
	assert.ok(INSPECTOR, 'INSPECTOR must name the Inspector launcher (mcp/ci.sh sets it)');
	for (const reading of READINGS) await onReading(reading);
}

main().then(
	() => process.exit(0),
	(error: unknown) => {
		console.error(error);
		process.exit(1);
	},
);
