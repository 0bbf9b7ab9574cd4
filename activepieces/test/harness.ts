/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMockActionContext, StoreScope, type ActionContext, type InputPropertyMap, type Store } from '@activepieces/pieces-framework';
import { ExecutionType, type ResumePayload } from '@activepieces/shared';

/**
 * The Activepieces engine is not on the npm registry, so these tests run the piece's actions the
 * way its piece executor does (packages/server/engine, piece-executor.ts): the framework's own
 * published helper, createMockActionContext, gives the context, and this file overrides only
 * what the helper leaves inert: the connection, a store that keeps values, files, the run's
 * waitpoint hooks (the engine asks its server for a waitpoint; here a loopback server plays that
 * server's resume endpoint), and RESUME with the callback's request as resumePayload.
 */

export class MemoryStore implements Store {
	readonly values = new Map<string, unknown>();
	private key(key: string, scope?: StoreScope) {
		return `${scope ?? StoreScope.FLOW}/${key}`;
	}
	async put<T>(key: string, value: T, scope?: StoreScope): Promise<T> {
		this.values.set(this.key(key, scope), JSON.parse(JSON.stringify(value)));
		return value;
	}
	async get<T>(key: string, scope?: StoreScope): Promise<T | null> {
		return (this.values.get(this.key(key, scope)) as T | undefined) ?? null;
	}
	async delete(key: string, scope?: StoreScope): Promise<void> {
		this.values.delete(this.key(key, scope));
	}
}

/** A run of a flow: its id, store and files, shared by every execution of its steps. */
export interface Run {
	id: string;
	store: MemoryStore;
	files: Array<{ fileName: string; data: Buffer }>;
	waitpoints: string[];
	waitedOn: string[];
}

export function newRun(id = `run_${Math.random().toString(16).slice(2)}`): Run {
	return { id, store: new MemoryStore(), files: [], waitpoints: [], waitedOn: [] };
}

/** The resume endpoint of an Activepieces server: records each POST as the engine's resumePayload. */
export async function startResumeServer(): Promise<{
	origin: string;
	received: Array<{ path: string; payload: ResumePayload }>;
	waitFor: (path: string, timeoutMs?: number) => Promise<ResumePayload>;
	close: () => Promise<void>;
}> {
	const received: Array<{ path: string; payload: ResumePayload }> = [];
	const server = http.createServer((req, res) => {
		let rawBody = '';
		req.on('data', (chunk: Buffer) => (rawBody += chunk.toString('utf8')));
		req.on('end', () => {
			const url = new URL(req.url ?? '/', 'http://127.0.0.1');
			const headers: Record<string, string> = {};
			for (const [name, value] of Object.entries(req.headers)) headers[name] = String(value);
			let body: unknown = rawBody;
			try {
				body = JSON.parse(rawBody);
			} catch {
				// Kept as text, as the server does for a body that is not JSON.
			}
			received.push({ path: url.pathname, payload: { body, rawBody, headers, queryParams: Object.fromEntries(url.searchParams) } });
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end('{}');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
	const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return {
		origin,
		received,
		waitFor: async (path, timeoutMs = 15_000) => {
			const deadline = Date.now() + timeoutMs;
			for (;;) {
				const found = received.find((r) => r.path === path);
				if (found) return found.payload;
				if (Date.now() > deadline) throw new Error(`no request to ${path} within ${timeoutMs} ms`);
				await new Promise((resolve) => setTimeout(resolve, 20));
			}
		},
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

export interface StepOptions {
	run: Run;
	auth: Record<string, unknown>;
	/** The instance's public address; the resume URLs of its waitpoints start with it. */
	publicUrl?: string;
	stepName?: string;
	resumePayload?: ResumePayload;
}

/** The context the engine hands a piece action, from the framework's helper. */
export function actionContext<Props extends InputPropertyMap>(propsValue: Record<string, unknown>, options: StepOptions): ActionContext<never, Props> {
	const base = createMockActionContext({ propsValue } as never) as unknown as ActionContext<never, Props>;
	const { run } = options;
	const publicUrl = options.publicUrl ?? 'http://localhost:4200';
	return {
		...base,
		executionType: options.resumePayload ? ExecutionType.RESUME : ExecutionType.BEGIN,
		resumePayload: options.resumePayload,
		auth: { type: 'CUSTOM_AUTH', props: options.auth } as never,
		store: run.store,
		step: { name: options.stepName ?? 'step_1' },
		server: { ...base.server, publicUrl },
		files: {
			write: async ({ fileName, data }: { fileName: string; data: Buffer }) => {
				run.files.push({ fileName, data });
				return `${publicUrl}/api/v1/step-files/${run.files.length}`;
			},
		},
		run: {
			...base.run,
			id: run.id,
			createWaitpoint: async () => {
				const id = `wp_${run.waitpoints.length + 1}`;
				run.waitpoints.push(id);
				const resumeUrl = `${publicUrl}/api/v1/flow-runs/${run.id}/waitpoints/${id}`;
				return { id, resumeUrl, buildResumeUrl: () => resumeUrl };
			},
			waitForWaitpoint: (id: string) => {
				run.waitedOn.push(id);
			},
		},
	} as unknown as ActionContext<never, Props>;
}
