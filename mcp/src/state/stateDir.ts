import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Record<string, string | undefined>;

/**
 * Where the server keeps its records when nothing says otherwise: the platform's folder for an
 * application's state, which outlives the process and is the user's own.
 */
export function defaultStateDir(env: Env, platform: NodeJS.Platform = process.platform, home: string = homedir()): string {
	if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'omni-video-mcp');
	if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'omni-video-mcp');
	return join(env.XDG_STATE_HOME || join(home, '.local', 'state'), 'omni-video-mcp');
}
