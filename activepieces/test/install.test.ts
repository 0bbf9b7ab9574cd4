/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- the Activepieces piece's test harness: n8n's rules for community nodes do not apply to it */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getPackageAliasForPiece } from '@activepieces/shared';
import { startSandbox, type Sandbox } from '../../sandbox';
import { EngineServer, newFlowRun, runActionStep, PIECE_PACKAGE_DIR, type InstalledPiece, type PieceLoader } from './engine';

/**
 * The published package, as an Activepieces instance installs and loads it: `npm pack` makes the
 * tarball `npm publish` would publish, and it is installed into an empty custom pieces folder the
 * two ways a platform adds a private piece (read in activepieces/activepieces,
 * packages/server/worker/src/lib/cache/pieces/piece-installer.ts, 0e4e924b):
 * - from npm: the worker writes `pieces/<name>-<version>/package.json` depending on the package and
 *   installs it (bun there, npm here, from the npm cache or registry): the package's files and its
 *   dependencies, nothing of this repository;
 * - as an uploaded archive: the worker unpacks the .tgz into `pieces/<name>-<version>/` with the
 *   tarball's `package/` stripped, and installs nothing: only `index.bundle.js` at that root runs.
 * Each is then loaded by each engine's loader (today's, `main`, and older engines' `src/index.js`)
 * in an engine process of its own, and runs a Generate Video step against the sandbox.
 */
let sandbox: Sandbox;
let tarball: string;
const manifest = JSON.parse(readFileSync(join(PIECE_PACKAGE_DIR, 'package.json'), 'utf8')) as { name: string; version: string };

/** The temporary folders these tests made, removed at the end. */
const made: string[] = [];

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: 40 });
	const packDir = mkdtempSync(join(tmpdir(), 'ap-pack-'));
	made.push(packDir);
	execFileSync('npm', ['pack', '--pack-destination', packDir, '--silent'], { cwd: PIECE_PACKAGE_DIR, stdio: 'ignore' });
	tarball = join(packDir, readdirSync(packDir).find((name) => name.endsWith('.tgz'))!);
}, 120_000);
afterAll(async () => {
	await sandbox.close();
	for (const folder of made.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A custom pieces folder with nothing in it yet, and where the piece's folder goes in it. */
function emptyPiecesFolder(): { installed: InstalledPiece; pieceFolder: string } {
	const customPiecesPath = mkdtempSync(join(tmpdir(), 'ap-instance-'));
	made.push(customPiecesPath);
	const pieceFolder = join(customPiecesPath, 'pieces', getPackageAliasForPiece({ pieceName: manifest.name, pieceVersion: manifest.version }));
	mkdirSync(pieceFolder, { recursive: true });
	return { installed: { customPiecesPath, pieceName: manifest.name, pieceVersion: manifest.version }, pieceFolder };
}

/** From npm: the piece's folder depends on the package, and the package manager installs it. */
function installedFromNpm(): InstalledPiece {
	const { installed, pieceFolder } = emptyPiecesFolder();
	writeFileSync(join(pieceFolder, 'package.json'), JSON.stringify({ name: `${manifest.name}-${manifest.version}`.replace('@', '').replace('/', '-'), version: manifest.version, dependencies: { [manifest.name]: `file:${tarball}` } }));
	execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--install-links', '--loglevel=error'], { cwd: pieceFolder, stdio: 'ignore' });
	return installed;
}

/** As an uploaded archive: unpacked with `package/` stripped, nothing installed. */
function installedFromArchive(): InstalledPiece {
	const { installed, pieceFolder } = emptyPiecesFolder();
	execFileSync('tar', ['-xzf', tarball, '-C', pieceFolder, '--strip-components=1']);
	return installed;
}

const auth = () => ({ type: 'CUSTOM_AUTH', props: { apiKey: sandbox.keys.premium, baseUrl: sandbox.url, plan: 'premium' } });

/** A step of the loaded piece: a Generate Video that returns the queued job (core and the framework both at work). */
async function generateWith(installed: InstalledPiece, loader: PieceLoader) {
	const result = await runActionStep(installed, new EngineServer('http://activepieces.internal:8080/api/'), newFlowRun(), {
		actionName: 'generate_video',
		stepName: 'generate',
		input: { auth: auth(), prompt: `Loaded by the ${loader} loader`, resolution: '720P', duration: 4, wait: 'none' },
	}, { loader });
	return result;
}

describe('the packed piece', () => {
	let fromNpm: InstalledPiece;
	beforeAll(() => {
		fromNpm = installedFromNpm();
	}, 180_000);

	it('holds every entry a loader looks for, and nothing of the sources or tests', () => {
		const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
		expect(files).toEqual(expect.arrayContaining(['package/package.json', 'package/index.bundle.js', 'package/src/index.js', 'package/dist/activepieces/src/index.js', 'package/dist/core/index.js']));
		expect(files.filter((file) => /\.ts$|\/test\/|\.map$/.test(file) && !file.endsWith('.d.ts'))).toEqual([]);
	});

	it.each<PieceLoader>(['current', 'main', 'legacy'])('installed from npm, the %s loader loads it and its step runs', async (loader) => {
		const result = await generateWith(fromNpm, loader);
		expect(result).toEqual(expect.objectContaining({ status: 'SUCCEEDED', output: expect.objectContaining({ status: 'queued', jobId: expect.stringMatching(/^job_/) }) }));
	});

	it('uploaded as an archive (nothing installed), the bundle at its root loads and its step runs', async () => {
		const installed = installedFromArchive();
		const pieceFolder = join(installed.customPiecesPath, 'pieces', getPackageAliasForPiece({ pieceName: installed.pieceName, pieceVersion: installed.pieceVersion }));
		expect(existsSync(join(pieceFolder, 'index.bundle.js'))).toBe(true);
		expect(existsSync(join(pieceFolder, 'node_modules'))).toBe(false);
		const result = await generateWith(installed, 'current');
		expect(result).toEqual(expect.objectContaining({ status: 'SUCCEEDED', output: expect.objectContaining({ status: 'queued' }) }));
	});
});
