/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot } from './markdown';

/** README is what a user reads in minutes (issue 26); the rest is one link away, in docs/. */
describe('README', () => {
	const readme = readFileSync(join(repositoryRoot, 'README.md'), 'utf8');
	const lines = readme.trimEnd().split('\n');

	it('is at most 250 lines, none over 400 characters', () => {
		expect(lines.length).toBeLessThanOrEqual(250);
		expect(lines.filter((line) => line.length > 400)).toEqual([]);
	});

	it('gives the two commands .ci/run starts with, exactly', () => {
		const quickStart = readme.slice(readme.indexOf('## Quick start'));
		const block = /```bash\n([\s\S]*?)```/.exec(quickStart)?.[1].trim().split('\n');
		expect(block).toEqual(['npm install && npm start', 'npm test']);
		const ci = readFileSync(join(repositoryRoot, '.ci', 'run'), 'utf8');
		expect(ci).toMatch(/\nnpm install && npm start\nnpm test\n/);
	});

	it('links each platform page, the guarantees and the benchmarks', () => {
		for (const page of ['docs/n8n.md', 'docs/zapier.md', 'docs/activepieces.md', 'docs/guarantees.md', 'docs/benchmarks.md', 'CONTRIBUTING.md']) {
			expect([page, readme.includes(`(${page})`)]).toEqual([page, true]);
		}
	});
});
