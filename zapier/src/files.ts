import { Readable } from 'node:stream';
import type { Bundle, ZObject } from 'zapier-platform-core';
import { detectContentType, type JobRecord, type OmniVideoClient, type UploadedFile } from '../../core';
import { plainDownload } from './host';

/** Enough of a file's first bytes to tell its type (MP4 and WebP name themselves by byte 12). */
const HEAD_BYTES = 64;

/** The name the file had, from its URL, when the step gives none. */
function fileNameOf(url: string, fallback: string): string {
	try {
		const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
		return last.includes('.') ? last : fallback;
	} catch {
		return fallback;
	}
}

/** The first bytes of a stream, and a stream that yields the whole body again from its start. */
async function splitHead(body: AsyncIterable<Uint8Array>): Promise<{ head: Buffer; whole: Readable }> {
	const iterator = body[Symbol.asyncIterator]();
	const chunks: Buffer[] = [];
	let length = 0;
	while (length < HEAD_BYTES) {
		const next = await iterator.next();
		if (next.done) break;
		chunks.push(Buffer.from(next.value));
		length += next.value.byteLength;
	}
	const head = Buffer.concat(chunks);
	async function* rest() {
		yield head;
		for (;;) {
			const next = await iterator.next();
			if (next.done) return;
			yield Buffer.from(next.value);
		}
	}
	return { head, whole: Readable.from(rest(), { objectMode: false }) };
}

export interface FileField {
	/** The field's label, for messages. */
	field: string;
	kind: 'image' | 'video';
	fallbackName: string;
	filename?: string;
	deadlineAtMs?: number;
}

/**
 * Uploads a file field to Omni Video storage. Zapier hands apps a URL (a file from an earlier step,
 * or one the user typed), fetched without the Omni Video key. When the source says its size, the
 * service is asked for an upload with that size before the body is read, and the bytes then go
 * from source to storage as they arrive; only a source that does not say its size is read whole.
 */
export async function uploadFileField(z: ZObject, client: OmniVideoClient, value: string, options: FileField): Promise<UploadedFile> {
	const url = value.trim();
	if (!/^https?:\/\/[^/\s]+/i.test(url)) {
		const shown = url.length > 60 ? `${url.slice(0, 59)}…` : url;
		throw new z.errors.Error(
			`${options.field} must be a file from an earlier step or a public http(s) URL of one; it holds "${shown}". Map a file field (such as an attachment) into it.`,
			'invalid_file',
			400,
		);
	}
	const response = await plainDownload(z, url);
	if (response.status >= 400) {
		throw new z.errors.Error(
			`${options.field}: the file at ${url} could not be read (HTTP ${response.status}). Map a file from an earlier step or a public URL.`,
			'file_unreadable',
			response.status,
		);
	}
	const declared = (response.headers.get('content-type') ?? '').split(';')[0].trim();
	const filename = options.filename || fileNameOf(url, options.fallbackName);
	const upload = { kind: options.kind, deadlineAtMs: options.deadlineAtMs };
	const size = Number(response.headers.get('content-length') ?? NaN);
	const body = response.body as unknown as Readable;
	if (!Number.isInteger(size) || size < 0) {
		const data = new Uint8Array(await response.buffer());
		return client.uploadFile({ filename, contentType: detectContentType(data) ?? (declared || 'application/octet-stream'), data }, upload);
	}
	const { head, whole } = await splitHead(body);
	return client.uploadStream(
		{
			filename,
			contentType: detectContentType(head) ?? (declared || 'application/octet-stream'),
			size,
			head,
			body: whole,
			cancel: () => {
				whole.destroy();
				body.destroy();
			},
			// Storage redirected the upload: the first stream went to the first address.
			reopen: async () => {
				whole.destroy();
				body.destroy();
				const again = await plainDownload(z, url);
				if (again.status >= 400) throw new z.errors.Error(`${options.field}: the file at ${url} could not be read again (HTTP ${again.status}).`, 'file_unreadable', again.status);
				return again.body;
			},
		},
		upload,
	);
}

/**
 * The hydrator behind a "Video File" output: Zapier calls it only when a later step uses the file,
 * and stashes the CDN's stream (plain, no key) without this app holding the video in memory.
 */
export const videoFileHydrator = async (z: ZObject, bundle: Bundle): Promise<string> => {
	const url = String(bundle.inputData.url ?? '');
	const response = await plainDownload(z, url);
	if (response.status >= 400) {
		throw new z.errors.Error(
			`The video file could not be downloaded from Omni Video (HTTP ${response.status}): its link may have expired. ` +
				'Use the Video URL soon after the job finishes, or run Find Job with the job ID for a fresh link.',
			'video_unavailable',
			response.status,
		);
	}
	// Its typings take the response only as a promise.
	return z.stashFile(Promise.resolve(response));
};

/** The input that adds the video as a file to a step's output. */
export const INCLUDE_VIDEO_FILE_FIELD = {
	key: 'includeVideoFile',
	label: 'Include Video File',
	type: 'boolean' as const,
	required: false,
	default: 'false',
	helpText:
		'Yes adds the MP4 as a file (Video File) for steps that take files, such as uploads to Drive or YouTube. The Video URL is always included.',
};

/** The output that INCLUDE_VIDEO_FILE_FIELD adds. */
export const VIDEO_FILE_OUTPUT_FIELD = { key: 'videoFile', label: 'Video File', type: 'file' as const };

/** A done job's video as a file (VIDEO_FILE_OUTPUT_FIELD) Zapier fetches only when a later step uses it. */
export function videoFileOutput(z: ZObject, job: JobRecord): { videoFile?: string } {
	return job.status === 'done' && job.resultUrls[0] ? { videoFile: z.dehydrateFile(videoFileHydrator, { url: job.resultUrls[0] }) } : {};
}
