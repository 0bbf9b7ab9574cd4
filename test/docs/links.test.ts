/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { anchorsOf, brokenLink, githubSlug, linksOf, repositoryRoot } from './markdown';

/** The pages users and contributors read: every relative link and anchor in them must resolve. */
const PAGES = [
	'README.md',
	'CONTRIBUTING.md',
	'CHANGELOG.md',
	'sandbox/README.md',
	...readdirSync(join(repositoryRoot, 'docs'))
		.filter((name) => name.endsWith('.md'))
		.map((name) => `docs/${name}`),
];

function filesUnder(folder: string): string[] {
	return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
		if (entry.name === 'node_modules' || entry.name === 'dist') return [];
		const path = join(folder, entry.name);
		return entry.isDirectory() ? filesUnder(path) : [path];
	});
}

describe('links in the docs', () => {
	it.each(PAGES)('every relative link and anchor in %s resolves', (page) => {
		const file = join(repositoryRoot, page);
		const links = linksOf(file);
		const broken = links
			.map((link) => ({ link, problem: brokenLink(link, repositoryRoot) }))
			.filter(({ problem }) => problem !== undefined)
			.map(({ link, problem }) => `${relative(repositoryRoot, link.file)}:${link.line}: ${problem}`);
		expect(broken).toEqual([]);
	});

	it('every docs/<page>.md#anchor named in code comments and the OpenAPI document resolves', () => {
		const folders = ['core', 'nodes', 'credentials', 'zapier/src', 'activepieces/src', 'sandbox', 'tools', 'bench', 'openapi', 'test'];
		const named = folders.flatMap((folder) => filesUnder(join(repositoryRoot, folder)))
			.filter((file) => /\.(ts|ya?ml)$/.test(file) && !file.includes(join('test', 'docs')))
			.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/docs\/[a-z0-9-]+\.md#[a-z0-9_-]+/g)].map((match) => ({ file, target: match[0] })));
		expect(named.length).toBeGreaterThan(20);
		const broken = named
			.map(({ file, target }) => ({ file, problem: brokenLink({ file: join(repositoryRoot, 'README.md'), line: 0, target }, repositoryRoot) }))
			.filter(({ problem }) => problem !== undefined)
			.map(({ file, problem }) => `${relative(repositoryRoot, file)}: ${problem}`);
		expect(broken).toEqual([]);
	});

	it('covers the platform pages', () => {
		expect(PAGES).toEqual(expect.arrayContaining(['docs/n8n.md', 'docs/zapier.md', 'docs/activepieces.md', 'docs/guarantees.md', 'docs/benchmarks.md']));
	});
});

describe('the link checker itself', () => {
	it('slugs headings as GitHub does', () => {
		expect(githubSlug('Ready for n8n\'s verification')).toBe('ready-for-n8ns-verification');
		expect(githubSlug('End to end: real n8n servers')).toBe('end-to-end-real-n8n-servers');
		expect(githubSlug('Polling\'s trade-off curve')).toBe('pollings-trade-off-curve');
		expect(githubSlug('50 text-to-video jobs, side by side')).toBe('50-text-to-video-jobs-side-by-side');
		expect(githubSlug('The `omniVideoBatch` key')).toBe('the-omnivideobatch-key');
		expect(githubSlug('Video → Generate')).toBe('video--generate');
		expect(githubSlug('snake_case stays')).toBe('snake_case-stays');
	});

	it('finds a broken file, a broken anchor, and numbers repeated headings', () => {
		const readme = join(repositoryRoot, 'README.md');
		expect(brokenLink({ file: readme, line: 1, target: 'docs/no-such-page.md' }, repositoryRoot)).toMatch(/no such file/);
		expect(brokenLink({ file: readme, line: 1, target: 'docs/n8n.md#no-such-heading' }, repositoryRoot)).toMatch(/no heading/);
		expect(brokenLink({ file: readme, line: 1, target: '#quick-start' }, repositoryRoot)).toBeUndefined();
		expect(brokenLink({ file: readme, line: 1, target: '../outside.md' }, repositoryRoot)).toMatch(/outside/);
		expect(brokenLink({ file: readme, line: 1, target: 'https://example.com/x#y' }, repositoryRoot)).toBeUndefined();
		const folder = mkdtempSync(join(tmpdir(), 'omni-video-links-'));
		const page = join(folder, 'page.md');
		writeFileSync(page, '# Title\n\n## Notes\n\n```md\n## Not a heading\n```\n\n## Notes\n');
		expect([...anchorsOf(page)]).toEqual(['title', 'notes', 'notes-1']);
		rmSync(folder, { recursive: true, force: true });
	});

	it('ignores links inside code', () => {
		const links = linksOf(join(repositoryRoot, 'CONTRIBUTING.md')).map((link) => link.target);
		expect(links).not.toContain('./node-host/runtime');
	});
});
