/**
 * A sandbox of a check's own for the scaled checks (issue 24), under the default profile or
 * `--service spec` (issue 23: keys ignored; callbacks unsigned, delivered once, none for failed
 * jobs; no progress; no X-RateLimit-* headers; 429 without Retry-After). Its clients keep its clock
 * (`clientClock: 'sandbox'`): the node reads it and paces itself on the plan's own minutes and hours
 * as the sandbox counts them, so a sped-up check measures what a node on a real clock does; only
 * n8n's own steps take real time. The layout's n8n processes do not care which sandbox a
 * credential names, so the same layout runs against it.
 */
import { startSandbox, type Sandbox } from '../../sandbox';

export async function withOwnSandbox<T>(options: { speed: number; strict: boolean }, run: (sandbox: Sandbox) => Promise<T>): Promise<T> {
	const sandbox = await startSandbox({ port: 0, speed: options.speed, insecureCallbacks: true, clientClock: 'sandbox', service: options.strict ? 'spec' : 'default' });
	try {
		return await run(sandbox);
	} finally {
		await sandbox.close();
	}
}
