/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- test code, never shipped */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_DIR } from '../support/n8n/engine';

interface PackedFile {
	path: string;
}

describe('the published package (npm pack)', () => {
	const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
		dependencies?: Record<string, string>;
		n8n: { nodes: string[]; credentials: string[] };
	};
	const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PACKAGE_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
	const files = (JSON.parse(output) as Array<{ files: PackedFile[] }>)[0].files.map((file) => file.path);

	it('holds only the build and the package documents: no tests, sandbox, tools or pictures', () => {
		for (const path of files) expect(path).toMatch(/^(dist\/|package\.json$|README\.md$|LICENSE\.md$|CHANGELOG\.md$)/);
		expect(files.some((path) => /(^|\/)(test|sandbox|bench|tools|docs|examples|zapier)\//.test(path))).toBe(false);
		expect(files.some((path) => /\.test\.|tsbuildinfo/.test(path))).toBe(false);
	});

	it('contains every node and credential n8n loads, with icons and codex files', () => {
		for (const entry of [...manifest.n8n.nodes, ...manifest.n8n.credentials]) expect(files).toContain(entry);
		expect(files).toEqual(expect.arrayContaining(['dist/nodes/OmniVideo/OmniVideo.node.json', 'dist/nodes/OmniVideoTrigger/OmniVideoTrigger.node.json', 'dist/icons/omniVideo.svg', 'dist/icons/omniVideo.dark.svg']));
	});

	it('has no runtime dependencies', () => {
		expect(manifest.dependencies ?? {}).toEqual({});
	});
});
