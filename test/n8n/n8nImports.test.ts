/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PACKAGE_DIR } from '../support/n8n/engine';

/**
 * The built package takes n8n-workflow from the n8n it runs in (a peer dependency): a value it
 * imports that one supported n8n-workflow lacks breaks the node there (n8n-workflow 2.34 dropped
 * `sleepWithAbort`, and every execution on n8n 2.34+ failed). Each value the build reads from
 * n8n-workflow must exist in the oldest supported one (the pin) and the newest (the alias).
 */
const SUPPORTED = {
	oldest: join(PACKAGE_DIR, 'node_modules', 'n8n-workflow'),
	newest: join(PACKAGE_DIR, 'node_modules', 'n8n-workflow-newest'),
};

function builtFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return builtFiles(path);
		return entry.name.endsWith('.js') ? [path] : [];
	});
}

/** `name` for each `<binding>.name` read off a `require("n8n-workflow")` binding, per file. */
function importedValues(): Map<string, string[]> {
	const found = new Map<string, string[]>();
	for (const dir of ['nodes', 'credentials', 'core']) {
		for (const file of builtFiles(join(PACKAGE_DIR, 'dist', dir))) {
			const source = readFileSync(file, 'utf8');
			for (const binding of source.matchAll(/(?:const|var|let)\s+(\w+)\s*=\s*(?:__importStar\()?require\("n8n-workflow"\)/g)) {
				for (const use of source.matchAll(new RegExp(`\\b${binding[1]}\\.(\\w+)`, 'g'))) {
					found.set(use[1], [...(found.get(use[1]) ?? []), relative(PACKAGE_DIR, file)]);
				}
			}
		}
	}
	return found;
}

// Loaded by path: in the n8n-newest Jest project `n8n-workflow` itself maps to the newest.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a package chosen at run time
const load = (dir: string) => require(dir) as Record<string, unknown>;

describe('what the built package imports from n8n-workflow', () => {
	const values = importedValues();

	it('is read from the build (the check sees the imports)', () => {
		expect([...values.keys()]).toEqual(expect.arrayContaining(['NodeOperationError', 'NodeApiError', 'NodeConnectionTypes']));
	});

	it.each(Object.entries(SUPPORTED))('exists in the %s supported n8n-workflow', (_which, dir) => {
		const workflow = load(dir);
		const missing = [...values.entries()].filter(([name]) => workflow[name] === undefined).map(([name, files]) => `${name} (${files.join(', ')})`);
		expect(missing).toEqual([]);
	});
});
