/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/** Debian packages the suite needs (Chromium, Redis, PostgreSQL), installed with apt-get when missing. */
import { existsSync } from 'node:fs';
import { run } from './processes';

let updated = false;

export async function ensureDebianPackages(packages: string[], binary: string): Promise<void> {
	if (existsSync(binary)) return;
	console.log(`  installing ${packages.join(', ')} with apt-get (once)`);
	const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
	if (!updated) {
		await run('apt-get', ['update'], { env, label: 'apt-get update' });
		updated = true;
	}
	await run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { env, label: `apt-get install ${packages.join(' ')}` });
	if (!existsSync(binary)) throw new Error(`${binary} is still missing after installing ${packages.join(', ')}`);
}
