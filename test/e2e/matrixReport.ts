/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- end-to-end tooling, never shipped */
/**
 * The support matrix's results as docs/n8n-matrix.md: one row per n8n version, with the date, the
 * Node it ran on, and the scenarios that failed, so that what was proven, and when, is committed.
 */
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO } from './instance';

interface VersionResult {
	version: string;
	/** The Node binary it ran on. */
	node: string;
	outcomes: Array<{ name: string; ok: boolean; line: string }>;
}

function nodeVersion(binary: string): string {
	return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
}

function row({ version, node, outcomes }: VersionResult): string {
	const failed = outcomes.filter((outcome) => !outcome.ok);
	const which = failed.length ? failed.map((outcome) => `\`${outcome.name}\``).join(', ') : 'none';
	return `| ${version} | ${nodeVersion(node)} | ${outcomes.length - failed.length} | ${failed.length} | ${which} |`;
}

export async function writeMatrix(results: VersionResult[]): Promise<string> {
	const file = join(REPO, 'docs', 'n8n-matrix.md');
	const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
	const failures = results.flatMap(({ version, outcomes }) => outcomes.filter((outcome) => !outcome.ok).map((outcome) => `- n8n ${version}, \`${outcome.name}\`: ${outcome.line.split('\n')[0].slice(0, 300)}`));
	const text = [
		'# Omni Video on each n8n release of the support matrix',
		'',
		`Run on ${new Date().toISOString().slice(0, 10)} at commit ${commit} with \`npm run test:e2e:matrix\`: the end-to-end suite's core`,
		'scenarios (the main job, each wait mode, the trigger, a retry, a failed job, bad input) on one n8n process per version,',
		'against the sandbox. CI runs every scenario, queue mode and the editor on the newest. What each version changed that',
		'the node leans on: [n8n-internals.md](n8n-internals.md#what-the-node-leans-on-and-the-test-that-proves-it).',
		'',
		'| n8n | Node | Passed | Failed | Failed scenarios |',
		'|---|---|---|---|---|',
		...results.map(row),
		'',
		...(failures.length ? ['## What failed', '', ...failures, ''] : []),
	].join('\n');
	await writeFile(file, text);
	return file;
}
