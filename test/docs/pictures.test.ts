/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCS_FOLDER, DOCS_PICTURES } from '../e2e/docsPictures';

/** The editor pictures in docs/ are made by the browser check, so that they follow the editor. */
describe('the editor pictures in docs/', () => {
	const browserCheck = readFileSync(join(__dirname, '..', 'e2e', 'browser.ts'), 'utf8');
	const pictures = readdirSync(DOCS_FOLDER).filter((name) => name.endsWith('.png'));

	it('are each taken by the browser check', () => {
		expect(pictures.sort()).toEqual(Object.values(DOCS_PICTURES).sort());
		for (const shot of Object.keys(DOCS_PICTURES)) expect([shot, browserCheck.includes(`shot('${shot}')`)]).toEqual([shot, true]);
	});

	it('are each shown on a page', () => {
		const pages = ['README.md', ...readdirSync(DOCS_FOLDER).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))]
			.map((page) => readFileSync(join(DOCS_FOLDER, '..', page), 'utf8'))
			.join('\n');
		for (const picture of pictures) expect([picture, pages.includes(picture)]).toEqual([picture, true]);
	});
});
