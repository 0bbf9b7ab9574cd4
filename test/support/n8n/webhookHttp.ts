/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test harness, never shipped */
import type http from 'node:http';
import type { IWebhookResponseData } from 'n8n-workflow';

/*
 * The HTTP side of n8n's webhook routes: the express-like request and response that
 * WebhookContext and the nodes read and write, and the record of each call for assertions.
 */

export interface WebhookRequest extends http.IncomingMessage {
	rawBody: Buffer;
	body: unknown;
	query: Record<string, string>;
	params: Record<string, string>;
}

export interface WebhookResponse extends http.ServerResponse {
	status(code: number): WebhookResponse;
	json(body: unknown): WebhookResponse;
}

/** One answer n8n gave to a webhook call, for assertions. */
export interface WebhookCall {
	path: string;
	/** The request as received, to replay it. */
	requestHeaders: Record<string, string>;
	requestBody: string;
	status: number;
	body: string;
	/** The execution the call started or resumed, if any. */
	executionId?: string;
}

/** Reads the body and dresses the pair as express does (n8n's webhook server is express). */
export async function expressLike(
	rawReq: http.IncomingMessage,
	rawRes: http.ServerResponse,
): Promise<{ req: WebhookRequest; res: WebhookResponse }> {
	const chunks: Buffer[] = [];
	for await (const chunk of rawReq) chunks.push(chunk as Buffer);
	const req = rawReq as WebhookRequest;
	req.rawBody = Buffer.concat(chunks);
	const url = new URL(req.url ?? '/', 'http://127.0.0.1');
	req.query = Object.fromEntries(url.searchParams);
	req.params = {};
	const isJson = (req.headers['content-type'] ?? '').includes('json');
	try {
		req.body = isJson && req.rawBody.length > 0 ? JSON.parse(req.rawBody.toString('utf8')) : {};
	} catch {
		req.body = {};
	}
	const res = rawRes as WebhookResponse;
	res.status = (code) => {
		res.statusCode = code;
		return res;
	};
	res.json = (body) => {
		if (!res.headersSent) res.setHeader('content-type', 'application/json');
		res.end(JSON.stringify(body));
		return res;
	};
	return { req, res };
}

/** A record of the call that fills in n8n's answer when the response ends. */
export function recordCall(path: string, req: WebhookRequest, res: WebhookResponse): WebhookCall {
	const requestHeaders: Record<string, string> = {};
	for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) requestHeaders[name] = String(value);
	const call: WebhookCall = { path, requestHeaders, requestBody: req.rawBody.toString('utf8'), status: 0, body: '' };
	const originalEnd = res.end.bind(res);
	res.end = ((chunk?: unknown) => {
		call.status = res.statusCode;
		call.body = chunk === undefined ? '' : String(chunk);
		return originalEnd(chunk as string);
	}) as typeof res.end;
	return call;
}

/** WebhookHelpers for responseMode "onReceived": answer unless the node already did. */
export function answerIfSilent(res: WebhookResponse, result: IWebhookResponseData): void {
	if (result.noWebhookResponse || res.headersSent) return;
	res.status(200).json(result.webhookResponse ?? { message: 'Workflow was started' });
}
