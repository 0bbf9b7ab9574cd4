/* eslint-disable @n8n/community-nodes/no-restricted-imports -- dev tooling, never shipped in the n8n package */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';

export type ErrorCode =
	| 'invalid_request'
	| 'unsupported_media_type'
	| 'prompt_too_long'
	| 'invalid_resolution'
	| 'invalid_duration'
	| 'invalid_model'
	| 'conflicting_inputs'
	| 'invalid_callback_url'
	| 'unauthorized'
	| 'insufficient_credits'
	| 'key_budget_exceeded'
	| 'forbidden'
	| 'not_found'
	| 'idempotency_conflict'
	| 'file_too_large'
	| 'idempotency_key_reused'
	| 'rate_limited'
	| 'concurrency_limited'
	/** Either limit, from a service that does not say which (service profile `spec`). */
	| 'too_many_requests'
	| 'internal'
	| 'unavailable'
	| 'range_not_satisfiable';

/** The largest JSON body the API and the admin API read. */
export const MAX_JSON_BYTES = 1024 * 1024;

export function newId(prefix: string): string {
	return `${prefix}_${randomBytes(9).toString('base64url')}`;
}

/** A response decided but not yet written: scenarios may still delay, corrupt or drop it. */
export interface Reply {
	status: number;
	headers: Record<string, string>;
	body?: unknown;
	/** An error body, which gets the request id written into it. */
	isError?: boolean;
}

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
	return { status, headers, body };
}

export function errorReply(status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): Reply {
	return { status, headers, body: { error: { code, message } }, isError: true };
}

/** Writes a reply, filling in the request id that every response carries. */
export function send(res: ServerResponse, reply: Reply, requestId: string, rawBody?: string): void {
	let body = reply.body;
	if (reply.isError) {
		const error = (body as { error: Record<string, unknown> }).error;
		body = { error: { ...error, requestId } };
	}
	const text = rawBody ?? (body === undefined ? '' : JSON.stringify(body));
	res.writeHead(reply.status, {
		...(text ? { 'Content-Type': 'application/json' } : {}),
		'X-Request-Id': requestId,
		...reply.headers,
	});
	res.end(text);
}

/** Resolves when the response can take more bytes, or has closed; leaves no listener behind. */
export function drained(res: ServerResponse): Promise<void> {
	return new Promise<void>((resolve) => {
		const done = () => {
			res.off('drain', done);
			res.off('close', done);
			resolve();
		};
		res.on('drain', done);
		res.on('close', done);
	});
}

/**
 * Writes the reply's JSON object grown to `size` bytes by one padding field, in chunks with
 * backpressure, stopping when the client hangs up: a huge but valid answer, never held whole.
 */
export async function sendHuge(res: ServerResponse, reply: Reply, requestId: string, size: number): Promise<void> {
	const head = JSON.stringify({ ...(reply.body as object), padding: '' }).slice(0, -2);
	const tail = '"}';
	res.writeHead(reply.status, { 'Content-Type': 'application/json', 'X-Request-Id': requestId, ...reply.headers });
	res.write(head);
	const chunk = Buffer.alloc(64 * 1024, 'a');
	for (let left = size - head.length - tail.length; left > 0 && !res.destroyed; left -= chunk.length) {
		if (!res.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await drained(res);
	}
	if (!res.destroyed) res.end(tail);
}

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req) {
		size += (chunk as Buffer).length;
		if (size > limit) return 'too_large';
		chunks.push(chunk as Buffer);
	}
	return Buffer.concat(chunks);
}

/** A percent-encoded path segment as text, or undefined when its encoding is broken (`%E0%A4%A`, `job_%`). */
export function decodeSegment(segment: string): string | undefined {
	try {
		return decodeURIComponent(segment);
	} catch {
		return undefined;
	}
}

/** True when a request body is declared as something other than JSON (absent is taken as JSON). */
export function isNonJsonBody(req: IncomingMessage): boolean {
	const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
	return type !== '' && type !== 'application/json' && !type.endsWith('+json');
}

export function bearerKey(req: IncomingMessage): string | undefined {
	const header = req.headers.authorization;
	const match = header?.match(/^Bearer\s+(.+)$/i);
	return match?.[1].trim();
}
