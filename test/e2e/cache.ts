/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/**
 * The cache folder the end-to-end suite and `npm start` keep outside the repository: pinned n8n
 * servers (one folder per version), their data folders, and the packed package. Installing n8n
 * takes minutes, so an installed version is reused; a half-finished install is redone.
 */
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { run } from './processes';

/** The n8n versions the suite knows: the newest 2.x that runs on Node 20, and the last 1.x. */
export const N8N_VERSIONS = ['2.8.4', '1.123.50'] as const;
export type N8nVersion = (typeof N8N_VERSIONS)[number];

export function cacheDir(): string {
	return process.env.OMNI_VIDEO_E2E_CACHE || join(homedir(), '.cache', 'omni-video-e2e');
}

/** Where one pinned n8n lives: `<cache>/n8n-<version>/node_modules/.bin/n8n`. */
export function n8nInstallDir(version: string): string {
	return join(cacheDir(), `n8n-${version}`);
}

export function n8nBinary(version: string): string {
	return join(n8nInstallDir(version), 'node_modules', 'n8n', 'bin', 'n8n');
}

/** Installs n8n `version` into the cache unless it is there already; prints what it does. */
export async function ensureN8n(version: string, log: (line: string) => void = console.log): Promise<string> {
	const dir = n8nInstallDir(version);
	const done = join(dir, '.installed');
	if (existsSync(done) && existsSync(n8nBinary(version))) {
		log(`n8n ${version}: cached in ${dir}`);
		return dir;
	}
	log(`n8n ${version}: installing into ${dir} (a few minutes, once)`);
	const started = Date.now();
	await rm(dir, { recursive: true, force: true });
	await mkdir(dir, { recursive: true });
	const manifest = {
		name: `omni-video-e2e-n8n-${version.replace(/\./g, '-')}`,
		private: true,
		dependencies: { n8n: version },
		// n8n 1.x pins an xlsx tarball URL outside the npm registry; the registry's 0.18.5 is the same library.
		overrides: { xlsx: '0.18.5' },
	};
	await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
	// `npm run` hands its own settings (this repository's ignore-scripts, for one) to what it starts
	// as npm_config_* variables: n8n's folder is another project and gets none of them.
	const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_config_')));
	await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, env, label: `npm install n8n@${version}`, log });
	// Where npm ran no install scripts, sqlite3 has no native binding yet: build it, once.
	const binding = join(dir, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node');
	if (!existsSync(binding)) {
		await run('npm', ['rebuild', 'sqlite3', '--ignore-scripts=false'], { cwd: dir, env, label: 'npm rebuild sqlite3 (compiles SQLite)', log });
	}
	if (!existsSync(binding)) throw new Error(`sqlite3's native binding was not built (${binding})`);
	await writeFile(done, new Date().toISOString());
	log(`n8n ${version}: installed in ${Math.round((Date.now() - started) / 1000)} s`);
	return dir;
}
