/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
import { join } from 'node:path';

/**
 * The editor pictures in docs/, each taken by the browser check (browser.ts) under its shot name, so
 * that they follow the editor. `E2E_DOCS_PICTURES=1` writes them into docs/ under these names.
 */
export const DOCS_PICTURES: Readonly<Record<string, string>> = {
	'nodes-panel-search': 'editor-nodes-panel.png',
	'trigger-panel-search': 'editor-trigger-panel.png',
	'run-shows-video': 'editor-run-shows-video.png',
};

export const DOCS_FOLDER = join(__dirname, '..', '..', 'docs');
