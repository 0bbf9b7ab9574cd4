import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StateStore } from './state/store';
import { metrics } from './telemetry/metrics';

/** A replica whose records do not answer a ping within this is not ready: it says so inside a probe's 2 s timeout (docs/mcp.md). */
const READY_WITHIN_MS = 1_000;

const PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * What an operator's probes and Prometheus ask a replica over HTTP, without a bearer key:
 * `/healthz` (the process answers), `/readyz` (its records answer too) and `/metrics`. None of
 * them shows a key, a URL's password or a record: readiness says why in words of its own.
 */
export class OperatorEndpoints {
	/** Whether the last readiness check passed (the store answered at the start), so that a change is said once, not at every probe. */
	private wasReady = true;

	constructor(
		private readonly store: Pick<StateStore, 'ping'>,
		private readonly say: (line: string) => void,
	) {
		// Only here are the metrics shown: Node's process metrics, which observe from their start, start here.
		metrics.withProcessMetrics();
	}

	serves(path: string): boolean {
		return PATHS.has(path);
	}

	async serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
		if (req.method !== 'GET' && req.method !== 'HEAD') {
			res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' }).end(JSON.stringify({ error: `${path} answers GET.` }));
			return;
		}
		if (path === '/metrics') {
			const { text, contentType } = await metrics.scrape();
			return send(req, res, 200, contentType, text);
		}
		if (path === '/healthz') return send(req, res, 200, 'application/json', JSON.stringify({ status: 'ok' }));
		const problem = await this.unready();
		send(req, res, problem ? 503 : 200, 'application/json', JSON.stringify(problem ? { status: 'unready', reason: problem } : { status: 'ready' }));
	}

	/** Why the replica is not ready (its records do not answer), or nothing when it is. */
	private async unready(): Promise<string | undefined> {
		let timer: NodeJS.Timeout | undefined;
		let problem: string | undefined;
		let cause = '';
		try {
			await Promise.race([
				this.store.ping(),
				new Promise<never>((_, reject) => {
					timer = setTimeout(() => reject(new TimeoutError()), READY_WITHIN_MS);
				}),
			]);
		} catch (error) {
			problem = error instanceof TimeoutError ? `The records did not answer within ${READY_WITHIN_MS / 1000} s.` : 'The records cannot be reached.';
			cause = error instanceof Error ? error.message : String(error);
		} finally {
			clearTimeout(timer);
		}
		if ((problem === undefined) !== this.wasReady) {
			// The operator's log says why (the store's own words, which print no password); the probe's answer does not.
			this.say(problem === undefined ? 'omni-video-mcp: ready: the records answer again' : `omni-video-mcp: not ready: ${problem} (${cause})`);
			this.wasReady = problem === undefined;
		}
		return problem;
	}
}

class TimeoutError extends Error {}

function send(req: IncomingMessage, res: ServerResponse, status: number, contentType: string, body: string): void {
	res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body);
}
