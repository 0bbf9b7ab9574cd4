/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-dangerous-functions -- a command-line tool for people and CI; never shipped */
/**
 * `npm run scan`: n8n's own verification scan, run here before publishing. n8n checks a community
 * package with `@n8n/scan-community-package`: it lints the sources its npm provenance points at
 * (package.json, nodes/ and credentials/) and the tarball's JavaScript with n8n's community-node
 * rules plus `no-console`, ignoring every `eslint-disable` comment. That command only takes a
 * published package, so this tool packs ours (`npm pack`, what `npm publish` would upload), unpacks
 * it, and runs the scanner's own `analyzePackage` on both legs with the scanner's own file
 * patterns. Any finding fails (exit 1) and is printed: n8n's verdict fails on errors only, so the
 * same rules are run once more through the scanner's own ESLint to catch warnings too.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cloudSupportEnabled } from './cloudSupport';

interface ScanResult {
	passed: boolean;
	message?: string;
	details?: string;
}

/** The part of the scanner's module this tool calls (it ships JavaScript without typings). */
interface Scanner {
	analyzePackage(dir: string, patterns?: string[]): Promise<ScanResult>;
	buildScanConfig(): Promise<unknown>;
	SOURCE_FILE_PATTERNS: string[];
}

/** The parts of the ESLint and fast-glob versions the scanner depends on that the warnings pass uses. */
interface LintMessage {
	ruleId: string | null;
	line: number;
	message: string;
}
interface LintResult {
	filePath: string;
	messages: LintMessage[];
}
interface ScannerEslint {
	ESLint: new (options: Record<string, unknown>) => { lintFiles(files: string[]): Promise<LintResult[]> };
}
type Glob = { sync(patterns: string[], options: Record<string, unknown>): string[] };

const SCANNER_MODULE = '@n8n/scan-community-package/scanner/scanner.mjs';

/** Warnings under the scanner's rules, which its verdict lets pass: linted as analyzePackage lints. */
async function warningsOf(scanner: Scanner, dir: string, patterns: string[]): Promise<string[]> {
	const fromScanner = createRequire(require.resolve(SCANNER_MODULE));
	const { ESLint } = fromScanner('eslint') as ScannerEslint;
	const glob = fromScanner('fast-glob') as Glob;
	const eslint = new ESLint({ cwd: dir, allowInlineConfig: false, overrideConfigFile: true, overrideConfig: await scanner.buildScanConfig() });
	const files = glob.sync(patterns, { cwd: dir, absolute: true, ignore: ['node_modules/**', '**/package-lock.json'] });
	const results = await eslint.lintFiles(files);
	return results.flatMap((result) => result.messages.map((m) => `${result.filePath}:${m.line} ${m.ruleId ?? ''} ${m.message}`));
}

/** The tarball leg's patterns, as `analyzePackageByName` passes them: compiled JavaScript and the manifest. */
const TARBALL_FILE_PATTERNS = ['**/*.js', 'package.json'];

const REPO = resolve(__dirname, '..');

function packAndUnpack(into: string): string {
	const [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', into], { cwd: REPO, encoding: 'utf8' })) as Array<{
		filename: string;
	}>;
	const unpacked = join(into, 'package');
	execFileSync('tar', ['-xzf', join(into, packed.filename), '-C', into]);
	const files = readdirSync(unpacked, { recursive: true }).length;
	console.log(`packed ${packed.filename}: ${files} entries`);
	return unpacked;
}

async function main(): Promise<void> {
	// The scanner ships as an ES module without an exports map: its module file is imported directly.
	const scanner = (await import(SCANNER_MODULE)) as Scanner;
	const work = mkdtempSync(join(tmpdir(), 'omni-video-scan-'));
	try {
		const legs: Array<[string, string, string[]]> = [
			['sources', REPO, scanner.SOURCE_FILE_PATTERNS],
			['tarball', packAndUnpack(work), TARBALL_FILE_PATTERNS],
		];
		let failed = false;
		for (const [name, dir, patterns] of legs) {
			const result = await scanner.analyzePackage(dir, patterns);
			const warnings = result.passed ? await warningsOf(scanner, dir, patterns) : [];
			const passed = result.passed && warnings.length === 0;
			console.log(`${passed ? 'passed' : 'FAILED'}: n8n's scan of the ${name} (${patterns.join(', ')})`);
			if (!result.passed) console.log(`${result.message ?? ''}\n${result.details ?? ''}`);
			if (warnings.length > 0) console.log(`${warnings.length} warnings:\n${warnings.join('\n')}`);
			failed ||= !passed;
		}
		// n8n Cloud takes a verified node only in strict mode with the default lint config; the node
		// CLI says whether this package is eligible.
		const cloud = execFileSync('npx', ['n8n-node', 'cloud-support'], { cwd: REPO, encoding: 'utf8' });
		const eligible = cloudSupportEnabled(cloud);
		console.log(`${eligible ? 'passed' : 'FAILED'}: n8n-node cloud-support (strict mode, n8n's default lint config)`);
		failed ||= !eligible;
		if (failed) process.exitCode = 1;
		else console.log('The package passes the checks n8n runs before verifying a community node.');
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
