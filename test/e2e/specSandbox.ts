/**
 * A second sandbox under the `--service spec` profile (issue 23): the strictest reading of the
 * spec at once (keys ignored; callbacks unsigned, delivered once, none for failed jobs; no
 * progress; no X-RateLimit-* headers; 429 without Retry-After). The layout's n8n processes do not
 * care which service a credential names, so the same layout runs against it.
 */
import { startSandbox, type Sandbox } from '../../sandbox';

export async function startSpecSandbox(speed: number): Promise<Sandbox> {
	return startSandbox({ port: 0, speed, insecureCallbacks: true, service: 'spec' });
}
