/* eslint-disable @n8n/community-nodes/no-restricted-imports -- dev tooling, never shipped in the n8n package */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveVideo, SAMPLE_MP4 } from '../cdn';
import { decodeSegment, errorReply, readBody, send } from '../httpUtil';
import type { SandboxState } from '../state';
import { findRoute, type PathParams, type Route } from './router';

/** A request for the storage or the CDN: no key, no journal, bytes rather than JSON. */
interface FileCall {
	state: SandboxState;
	req: IncomingMessage;
	res: ServerResponse;
	url: URL;
	params: PathParams;
	requestId: string;
}

export type FileRoute = Route<(call: FileCall) => Promise<void> | void>;

/** The PUT of a pre-signed upload URL: checked against its ticket, maybe redirected, then stored. */
async function storeUpload({ state, req, res, url, params, requestId }: FileCall): Promise<void> {
	const { uploads, config } = state;
	const refusal = uploads.checkPut(params.token, url.searchParams, req.headers['content-type'], state.clock.now());
	if (refusal) return send(res, errorReply(403, 'forbidden', `Upload refused: ${refusal}.`), requestId);
	const bytes = await readBody(req, config.maxUploadBytes);
	if (bytes === 'too_large') return send(res, errorReply(413, 'file_too_large', `At most ${config.maxUploadBytes} bytes are accepted.`), requestId);
	const ticket = uploads.tickets.get(params.token);
	const redirect = ticket && uploads.redirectFor(ticket, url);
	if (redirect) {
		res.writeHead(redirect.status, { 'X-Request-Id': requestId, Location: redirect.location, 'Content-Length': '0' });
		return void res.end();
	}
	if (ticket) ticket.data = bytes;
	res.writeHead(200, { 'X-Request-Id': requestId, 'Content-Length': '0' });
	res.end();
}

/** An uploaded file, at the fileUrl its ticket gave. */
function serveUpload({ state, req, res, url, requestId }: FileCall): void {
	const file = state.uploads.fileAt(url.pathname);
	if (!file?.data) return send(res, errorReply(404, 'not_found', 'No such file.'), requestId);
	res.writeHead(200, { 'Content-Type': file.contentType, 'Content-Length': String(file.data.length), 'X-Request-Id': requestId });
	res.end(req.method === 'HEAD' ? undefined : file.data);
}

/** A finished job's video, under its owner's user id, as the real CDN serves it (no key). */
function serveOutput({ state, req, res, params, requestId }: FileCall): Promise<void> | void {
	const id = decodeSegment(params.jobId);
	const job = id === undefined ? undefined : state.jobs.all.get(id);
	if (!job || !job.finished || job.failure || job.key.account.userId !== params.userId) {
		return send(res, errorReply(404, 'not_found', 'No such video.'), requestId);
	}
	return serveVideo(req, res, job.largeOutput ? state.config.largeFileBytes : SAMPLE_MP4.length, requestId);
}

/** Storage and CDN (docs/api.md#uploads, #result-urls); HEAD is answered wherever GET is. */
export const FILE_ROUTES: readonly FileRoute[] = [
	{ method: 'PUT', path: '/__uploads/{token}', handle: storeUpload },
	{ method: 'GET', path: '/files/{token}/{filename}', handle: serveUpload },
	{ method: 'HEAD', path: '/files/{token}/{filename}', handle: serveUpload },
	{ method: 'GET', path: '/omni/{userId}/{jobId}/output.mp4', handle: serveOutput },
	{ method: 'HEAD', path: '/omni/{userId}/{jobId}/output.mp4', handle: serveOutput },
];

/** Any request outside /api/ and /__sandbox/. */
export async function handleFileRequest(state: SandboxState, req: IncomingMessage, res: ServerResponse, url: URL, requestId: string): Promise<void> {
	const found = findRoute(FILE_ROUTES, req.method ?? '', url.pathname);
	if (!found) return send(res, errorReply(404, 'not_found', `Nothing at ${url.pathname}.`), requestId);
	await found.route.handle({ state, req, res, url, params: found.params, requestId });
}
