/* eslint-disable @n8n/community-nodes/no-hardcoded-secrets -- end-to-end tooling, never shipped: the key is the sandbox's, made up here */
/**
 * A second sandbox under the `--service spec` profile (issue 23): the strictest reading of the
 * spec at once (keys ignored; callbacks unsigned, delivered once, none for failed jobs; no
 * progress; no X-RateLimit-* headers; 429 without Retry-After). The layout's n8n processes do not
 * care which service a credential names, so the same layout runs against it.
 */
import { startSandbox, type Sandbox, type SandboxOptions } from '../../sandbox';
import { check } from './context';

/**
 * Starts it and makes sure it is the strict one: two creates with one Idempotency-Key must make
 * two jobs (a sandbox without the profile replays the first, and every figure would be the
 * default sandbox's under the spec's name).
 */
export async function startSpecSandbox(speed: number): Promise<Sandbox> {
	// `service` is the profile switch (sandbox/config.ts); spelled as an extra option so that this
	// file compiles on a sandbox without it, where the probe below refuses to go on.
	const sandbox = await startSandbox({ port: 0, speed, insecureCallbacks: true, ...{ service: 'spec' } } as SandboxOptions);
	const key = 'omni_test_e2e_spec_probe';
	await fetch(`${sandbox.url}/__sandbox/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key, account: 'acct_pro', label: 'e2e-spec-probe' }) });
	const create = async () => {
		const response = await fetch(`${sandbox.url}/api/v1/generate`, {
			method: 'POST',
			headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'e2e-spec-probe' },
			body: JSON.stringify({ model: 'omni-video', prompt: 'spec profile probe', resolution: '720P', duration: 4 }),
		});
		return ((await response.json()) as { id?: string }).id;
	};
	const first = await create();
	const second = await create();
	if (!first || !second || first === second) await sandbox.close();
	check(first && second && first !== second, `the sandbox has no --service spec profile (a second create with the same Idempotency-Key answered ${String(second)}, the first ${String(first)}): merge the sandbox's service profiles`);
	return sandbox;
}
