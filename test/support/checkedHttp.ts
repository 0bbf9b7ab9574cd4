import { resolveConfig } from '../../sandbox/config';
import type { ServiceSwitches } from '../../sandbox/service';
import { expectConforms, type ObservedResponse } from './openapi';

/**
 * A plain HTTP client for sandbox tests: every response it sees is checked against the OpenAPI
 * document, as the sandbox's service profile answers it (`service`: the sandbox's `service.switches`;
 * by default the profile OMNI_SANDBOX_SERVICE names).
 */
export class CheckedHttp {
	readonly seen: ObservedResponse[] = [];
	private readonly service: Pick<ServiceSwitches, 'retryAfter'>;

	constructor(
		readonly baseUrl: string,
		private readonly key?: string,
		service?: Pick<ServiceSwitches, 'retryAfter'>,
	) {
		this.service = service ?? resolveConfig({});
	}

	async request(
		method: string,
		path: string,
		options: { body?: unknown; headers?: Record<string, string>; key?: string | null; raw?: boolean } = {},
	): Promise<ObservedResponse & { bytes: Buffer }> {
		const key = options.key === undefined ? this.key : options.key;
		const headers: Record<string, string> = { ...options.headers };
		if (key) headers.Authorization = `Bearer ${key}`;
		let body: string | Blob | undefined;
		if (options.body !== undefined) {
			if (Buffer.isBuffer(options.body)) body = new Blob([new Uint8Array(options.body)]);
			else {
				body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
				headers['Content-Type'] ??= 'application/json';
			}
		}
		const url = path.startsWith('http') ? path : this.baseUrl + path;
		const response = await fetch(url, { method, headers, body });
		const bytes = Buffer.from(await response.arrayBuffer());
		const responseHeaders: Record<string, string> = {};
		response.headers.forEach((value, name) => (responseHeaders[name] = value));
		let parsed: unknown;
		if ((responseHeaders['content-type'] ?? '').includes('json') && bytes.length > 0) parsed = JSON.parse(bytes.toString('utf8'));
		const observed = { method, path: new URL(url).pathname, status: response.status, headers: responseHeaders, body: parsed };
		this.seen.push(observed);
		expectConforms(observed, { retryAfter: this.service.retryAfter });
		return { ...observed, bytes };
	}

	generate(body: Record<string, unknown>, headers: Record<string, string> = {}, key?: string) {
		return this.request('POST', '/api/v1/generate', { body: { model: 'omni-video', ...body }, headers, key });
	}

	job(id: string, key?: string) {
		return this.request('GET', `/api/v1/jobs/${encodeURIComponent(id)}`, { key });
	}
}
