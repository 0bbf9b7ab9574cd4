/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test harness, never shipped */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RUN_FOLDER_VARIABLE } from './runFolder';

const ROOT = resolve(__dirname, '../..');

function newestChange(path: string): number {
	const stats = statSync(path);
	if (!stats.isDirectory()) return stats.mtimeMs;
	return Math.max(stats.mtimeMs, ...readdirSync(path).map((entry) => newestChange(join(path, entry))));
}

/** Runs `build` when `marker` is missing or older than one of `sources`. */
function buildIfStale(marker: string, sources: string[], build: () => void): void {
	const built = existsSync(marker) ? statSync(marker).mtimeMs : 0;
	const changed = Math.max(...sources.map((source) => newestChange(join(ROOT, source))));
	if (built < changed) build();
}

/**
 * The n8n engine tests load the built n8n package, as n8n does, and the Activepieces tests load the
 * built piece, as Activepieces' engine does: each is built when missing or older than a source, so
 * `npm test` on a fresh clone tests what the builds make. The MCP server's bin likewise.
 */
export default function buildPackagesIfStale(): void {
	// Test workers inherit this environment: their temporary folders go under one folder that
	// globalTeardown removes, since a worker's own exit handlers do not run when Jest stops it.
	process.env[RUN_FOLDER_VARIABLE] = mkdtempSync(join(tmpdir(), 'omni-video-jest-'));
	buildIfStale(join(ROOT, 'dist', 'nodes', 'OmniVideo', 'OmniVideo.node.js'), ['core', 'credentials', 'nodes', 'icons', 'package.json'], () =>
		execFileSync(join(ROOT, 'node_modules', '.bin', 'n8n-node'), ['build'], { cwd: ROOT, stdio: 'ignore' }),
	);
	const piece = join(ROOT, 'activepieces');
	// The piece's build (package.json's `build`): tsc, then the entries every loader looks for (build/entries.mjs), the bundle last.
	buildIfStale(join(piece, 'index.bundle.js'), ['core', 'activepieces/src', 'activepieces/build', 'activepieces/package.json', 'activepieces/tsconfig.json'], () => {
		rmSync(join(piece, 'dist'), { recursive: true, force: true });
		execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(piece, 'tsconfig.json')], { cwd: piece, stdio: 'ignore' });
		execFileSync(process.execPath, [join(piece, 'build', 'entries.mjs')], { cwd: piece, stdio: 'ignore' });
	});
	// The MCP tests run the server as its users do: the built bin, over stdio and HTTP.
	buildIfStale(join(ROOT, 'mcp', 'dist', 'cli.js'), ['core', 'mcp/src', 'mcp/package.json'], () =>
		execFileSync('npm', ['run', 'build', '--silent'], { cwd: join(ROOT, 'mcp'), stdio: 'ignore' }),
	);
}
