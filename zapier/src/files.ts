/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Zapier app: n8n's rules for community nodes do not apply to it */
import type { Bundle, ZObject } from 'zapier-platform-core';
import { detectContentType, type UploadImageInput } from '../../core';
import { plainDownload } from './host';

/** The name the file had, from its URL, when the step gives none. */
function fileNameOf(url: string, fallback: string): string {
	try {
		const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
		return last.includes('.') ? last : fallback;
	} catch {
		return fallback;
	}
}

/**
 * Reads a file field: Zapier hands apps a URL (a file from an earlier step, or one the user typed)
 * that is fetched without the Omni Video key. The type comes from the bytes when they show one.
 */
export async function readFileField(z: ZObject, url: string, fallbackName: string): Promise<UploadImageInput> {
	const response = await plainDownload(z, url);
	if (response.status >= 400) {
		throw new z.errors.Error(
			`The file at ${url} could not be read (HTTP ${response.status}). Map a file from an earlier step or a public URL.`,
			'file_unreadable',
			response.status,
		);
	}
	const data = new Uint8Array(await response.buffer());
	const declared = (response.headers.get('content-type') ?? '').split(';')[0].trim();
	return {
		filename: fileNameOf(url, fallbackName),
		contentType: detectContentType(data) ?? (declared || 'application/octet-stream'),
		data,
	};
}

/**
 * The hydrator behind a "Video File" output: Zapier calls it only when a later step uses the file,
 * and stashes the CDN's stream (plain, no key) without this app holding the video in memory.
 */
export const videoFileHydrator = async (z: ZObject, bundle: Bundle): Promise<string> =>
	z.stashFile(plainDownload(z, String(bundle.inputData.url)));

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
