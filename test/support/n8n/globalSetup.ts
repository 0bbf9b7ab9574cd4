/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test harness, never shipped */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
const SOURCES = ['core', 'credentials', 'nodes', 'icons', 'package.json'];
const MARKER = join(ROOT, 'dist', 'nodes', 'OmniVideo', 'OmniVideo.node.js');

function newestChange(path: string): number {
	const stats = statSync(path);
	if (!stats.isDirectory()) return stats.mtimeMs;
	return Math.max(stats.mtimeMs, ...readdirSync(path).map((entry) => newestChange(join(path, entry))));
}

/**
 * The engine tests load the built package, as n8n does: build it when `dist/` is missing or
 * older than a source, so `npm test` on a fresh clone tests what `npm run build` makes.
 */
export default function buildPackageIfStale(): void {
	const built = existsSync(MARKER) ? statSync(MARKER).mtimeMs : 0;
	const changed = Math.max(...SOURCES.map((source) => newestChange(join(ROOT, source))));
	if (built >= changed) return;
	execFileSync(join(ROOT, 'node_modules', '.bin', 'n8n-node'), ['build'], { cwd: ROOT, stdio: 'ignore' });
}
