import type { ApiRuntime } from './apiRequest';
import { callApi } from './apiRequest';
import type { AbortSignalLike, HttpMethod } from './transport';
import type { UploadImageInput } from './types';
import { validateUploadInput } from './validate';
import { parseUploadTicket } from './parse';
import { TransportFailure } from './errors';
import { settle } from './settle';
import { sendPlain } from './plainRequest';
import { errorFromResponse, errorFromTransportFailure } from './httpErrors';

export interface UploadedFile {
	/** Pass this as `imageUrl` (or `videoUrl`) to Generate Video. */
	fileUrl: string;
	contentType: string;
	size: number;
	filename: string;
	expiresAt?: string;
}

const UPLOAD_TIMEOUT_MS = 120_000;

export interface UploadOptions {
	kind?: 'image' | 'video';
	signal?: AbortSignalLike;
	/** Absolute time on the host's clock by which the upload must be done (see ApiCall). */
	deadlineAtMs?: number;
}

/**
 * Uploads a source file in two steps (docs/api.md#uploads): ask the API for a pre-signed upload URL,
 * then PUT the bytes there with exactly the ticket's headers and no Authorization header (the
 * key never leaves for another host).
 */
export async function uploadImage(
	runtime: ApiRuntime,
	input: UploadImageInput,
	options: UploadOptions = {},
): Promise<UploadedFile> {
	const file = validateUploadInput(input, options.kind ?? 'image');
	const response = await callApi(runtime, {
		operation: 'upload',
		method: 'POST',
		path: '/api/upload',
		body: { filename: file.filename, contentType: file.contentType, size: file.data.byteLength },
		signal: options.signal,
		deadlineAtMs: options.deadlineAtMs,
	});
	const ticket = parseUploadTicket(response.body);
	const context = () => ({ operation: 'uploadPut' as const, nowMs: runtime.clock.now() });
	const sent = await settle(
		sendPlain(runtime.transport.plain, {
			method: ticket.method as HttpMethod,
			url: ticket.uploadUrl,
			headers: { 'Content-Type': file.contentType, ...ticket.headers },
			body: file.data,
			timeoutMs: Math.min(UPLOAD_TIMEOUT_MS, (options.deadlineAtMs ?? Infinity) - runtime.clock.now()),
			signal: options.signal,
		}),
	);
	if (!sent.ok) {
		if (sent.error instanceof TransportFailure) throw errorFromTransportFailure(sent.error, context());
		throw sent.error;
	}
	const put = sent.value;
	if (put.status < 200 || put.status >= 300) throw errorFromResponse(put, context());
	return {
		fileUrl: ticket.fileUrl,
		contentType: file.contentType,
		size: file.data.byteLength,
		filename: file.filename,
		expiresAt: ticket.expiresAt,
	};
}
