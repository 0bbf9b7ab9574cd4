/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test harness, never shipped */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { runFolder } from '../runFolder';

/**
 * n8n-core reads its settings from the environment when its services are first created:
 * its home folder (where it writes an encryption key) goes to a temporary folder of the run, binary
 * data to files there as on a real instance, and its logger stays quiet. Imported before
 * n8n-core so that these hold from its first use.
 */
if (!process.env.N8N_USER_FOLDER) {
	// Under the run's folder, which goes with the run.
	process.env.N8N_USER_FOLDER = mkdtempSync(join(runFolder(), 'omni-video-n8n-'));
}
process.env.N8N_LOG_LEVEL ??= 'silent';
process.env.N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS ??= 'false';
process.env.N8N_DEFAULT_BINARY_DATA_MODE ??= 'filesystem';
process.env.N8N_AVAILABLE_BINARY_DATA_MODES ??= 'filesystem';
