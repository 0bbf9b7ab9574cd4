import type { ApiRuntime } from '../http/apiRequest';
import { callApi } from '../http/apiRequest';
import { StreamBody, type AbortSignalLike, type HttpMethod } from '../http/transport';
import type { StreamedUploadInput, UploadFileInput } from '../types';
import { validateStreamedUpload, validateUploadInput } from '../input/validateUpload';
import { parseUploadTicket } from '../answers/parseUploadTicket';
import { TransportFailure } from '../errors/errors';
import { settle } from '../settle';
import { sendPlain } from '../http/plainRequest';
import { errorFromResponse, errorFromTransportFailure } from '../errors/httpErrors';

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
export async function uploadFile(runtime: ApiRuntime, input: UploadFileInput, options: UploadOptions = {}): Promise<UploadedFile> {
	const file = validateUploadInput(input, options.kind ?? 'image');
	return sendUpload(runtime, { filename: file.filename, contentType: file.contentType, size: file.data.byteLength, body: file.data }, options);
}

/**
 * The same upload for a file read as it arrives (a URL's body): the service sees its announced
 * size before a byte is read, so a file it refuses (413) is never downloaded, and the bytes go
 * from source to storage without being held whole.
 */
export async function uploadStream(runtime: ApiRuntime, input: StreamedUploadInput, options: UploadOptions = {}): Promise<UploadedFile> {
	const sent = await settle(
		(async () => {
			const file = validateStreamedUpload(input, options.kind ?? 'image');
			return sendUpload(runtime, { filename: file.filename, contentType: file.contentType, size: file.size, body: streamBody(file, file.body) }, options);
		})(),
	);
	if (sent.ok) return sent.value;
	input.cancel?.();
	throw sent.error;
}

function streamBody(input: StreamedUploadInput, stream: unknown): StreamBody {
	const { reopen } = input;
	return new StreamBody(stream, input.size, reopen && (async () => streamBody(input, await reopen())));
}

async function sendUpload(
	runtime: ApiRuntime,
	file: { filename: string; contentType: string; size: number; body: Uint8Array | StreamBody },
	options: UploadOptions,
): Promise<UploadedFile> {
	const response = await callApi(runtime, {
		operation: 'upload',
		method: 'POST',
		path: '/api/upload',
		body: { filename: file.filename, contentType: file.contentType, size: file.size },
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
			body: file.body,
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
		size: file.size,
		filename: file.filename,
		expiresAt: ticket.expiresAt,
	};
}
