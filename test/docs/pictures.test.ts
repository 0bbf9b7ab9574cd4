/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCS_FOLDER, DOCS_PICTURES } from '../e2e/docsPictures';

/**
 * The pictures in docs/ are made by tests, so that they follow what they show: the editor's by the
 * browser check, the MCP job view's by its test in Chromium (MCP_VIEW_SCREENSHOTS=1).
 */
describe('the pictures in docs/', () => {
	const browserCheck = readFileSync(join(__dirname, '..', 'e2e', 'browser.ts'), 'utf8');
	const viewCheck = readFileSync(join(__dirname, '..', '..', 'mcp', 'test', 'appView.test.ts'), 'utf8');
	const pictures = readdirSync(DOCS_FOLDER).filter((name) => name.endsWith('.png'));

	it('are each taken by the browser check or the job view\'s test', () => {
		const editor = pictures.filter((name) => name.startsWith('editor-'));
		expect(editor.sort()).toEqual(Object.values(DOCS_PICTURES).sort());
		for (const shot of Object.keys(DOCS_PICTURES)) expect([shot, browserCheck.includes(`shot('${shot}')`)]).toEqual([shot, true]);
		for (const picture of pictures.filter((name) => !name.startsWith('editor-'))) expect([picture, viewCheck.includes(`'${picture}')`)]).toEqual([picture, true]);
	});

	it('are each shown on a page', () => {
		const pages = ['README.md', ...readdirSync(DOCS_FOLDER).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))]
			.map((page) => readFileSync(join(DOCS_FOLDER, '..', page), 'utf8'))
			.join('\n');
		for (const picture of pictures) expect([picture, pages.includes(picture)]).toEqual([picture, true]);
	});
});
