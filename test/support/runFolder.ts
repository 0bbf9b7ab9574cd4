/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test harness, never shipped */
import { tmpdir } from 'node:os';

/** The environment variable naming the folder one Jest run keeps its temporary files in. */
export const RUN_FOLDER_VARIABLE = 'OMNI_VIDEO_TEST_RUN_FOLDER';

/** The run's folder when Jest's globalSetup made one, else the system's temporary folder. */
export function runFolder(): string {
	return process.env[RUN_FOLDER_VARIABLE] ?? tmpdir();
}
