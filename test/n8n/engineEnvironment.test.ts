/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test harness, never shipped */
import { dirname } from 'node:path';
import '../support/n8n/environment';
import { RUN_FOLDER_VARIABLE } from '../support/runFolder';

describe("the engine tests' n8n home folder", () => {
	it('lies in the folder Jest removes after the run, so that runs leave nothing in the temporary folder', () => {
		// A worker's exit handler does not run when Jest stops the worker: folders of their own were left behind.
		const runFolder = process.env[RUN_FOLDER_VARIABLE];
		expect(runFolder).toBeDefined();
		expect(dirname(process.env.N8N_USER_FOLDER ?? '')).toBe(runFolder);
	});
});
