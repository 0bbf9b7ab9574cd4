/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test harness, never shipped */
import { rmSync } from 'node:fs';
import { RUN_FOLDER_VARIABLE } from './runFolder';

/** Removes the run's temporary folder (globalSetup made it), so that test runs leave nothing behind. */
export default function removeRunFolder(): void {
	const folder = process.env[RUN_FOLDER_VARIABLE];
	if (folder) rmSync(folder, { recursive: true, force: true });
}
