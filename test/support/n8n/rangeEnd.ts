/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test support, never shipped */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Which end of the supported n8n range this jest project runs the engine tests on: jest.config.js
 * maps n8n-workflow to the newest for the `n8n-newest` project, so the version resolved here tells.
 * A test of the node's own logic, which no n8n release changes, runs on the pinned end alone.
 */
const pinned = (JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies['n8n-workflow'];
// eslint-disable-next-line @typescript-eslint/no-require-imports -- resolved through jest's moduleNameMapper, which an import of JSON would not show as plainly
const loaded = (require('n8n-workflow/package.json') as { version: string }).version;

export const onNewestN8n = loaded !== pinned;
