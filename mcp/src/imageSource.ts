import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, sep } from 'node:path';
import { ValidationError, detectContentType, isAcceptedCallbackUrl } from '../../core';

/** The largest image read into memory for an upload; the service's own limit may be lower. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

export interface ImageBytes {
	filename: string;
	contentType: string;
	data: Uint8Array;
}

const refuse = (field: string, value: unknown, message: string) => new ValidationError(message, [{ field, value, message }]);

/** A local image, only from inside a folder the user allowed (links followed first, so none leads out). */
export async function localImage(path: string, allowedDirs: string[]): Promise<ImageBytes> {
	if (allowedDirs.length === 0) {
		throw refuse('path', path, 'Reading local files is off: the user must allow a folder (OMNI_VIDEO_MCP_ALLOWED_DIRS or --allow-dir) in the server\'s configuration. Or pass an https url instead.');
	}
	let real: string;
	try {
		real = await realpath(path);
	} catch {
		throw refuse('path', path, `No file at ${path}: give the absolute path of an image inside ${allowedDirs.join(' or ')}.`);
	}
	const roots = await Promise.all(allowedDirs.map((dir) => realpath(dir).catch(() => dir)));
	if (!roots.some((root) => real === root || real.startsWith(root.endsWith(sep) ? root : root + sep))) {
		throw refuse('path', path, `${path} is outside the folders the user allowed (${allowedDirs.join(', ')}): copy the image there, or ask the user to allow its folder.`);
	}
	const info = await stat(real);
	if (!info.isFile()) throw refuse('path', path, `${path} is not a file.`);
	if (info.size > MAX_IMAGE_BYTES) throw refuse('path', path, `${path} is ${Math.ceil(info.size / 1024 / 1024)} MB; images up to ${MAX_IMAGE_BYTES / 1024 / 1024} MB are uploaded.`);
	const data = new Uint8Array(await readFile(real));
	return { filename: basename(real), contentType: typeOf(data, 'path', path), data };
}

/** An image fetched from a public https URL (plain http only from loopback, beside a local sandbox). */
export async function remoteImage(url: string, allowLoopbackHttp: boolean, signal: AbortSignal): Promise<ImageBytes> {
	let parsed: URL;
	try {
		parsed = new URL(url);
	} catch {
		throw refuse('url', url, `url must be an absolute https:// address of an image (got "${url}").`);
	}
	if (parsed.protocol !== 'https:' && !(allowLoopbackHttp && isAcceptedCallbackUrl(url, { allowInsecureLoopbackCallback: true }))) {
		throw refuse('url', url, `url must start with https:// (got "${url}").`);
	}
	let response: Response;
	try {
		response = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(60_000)]) });
	} catch (error) {
		throw refuse('url', url, `The image at ${url} could not be fetched (${(error as Error).message}): check that it is public.`);
	}
	if (!response.ok || !response.body) throw refuse('url', url, `The image at ${url} answered ${response.status}: check that it is public.`);
	if (Number(response.headers.get('content-length')) > MAX_IMAGE_BYTES) {
		await response.body.cancel();
		throw refuse('url', url, `The image at ${url} is over ${MAX_IMAGE_BYTES / 1024 / 1024} MB.`);
	}
	const chunks: Uint8Array[] = [];
	let size = 0;
	for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
		size += chunk.byteLength;
		if (size > MAX_IMAGE_BYTES) throw refuse('url', url, `The image at ${url} is over ${MAX_IMAGE_BYTES / 1024 / 1024} MB.`);
		chunks.push(chunk);
	}
	const data = new Uint8Array(Buffer.concat(chunks));
	const name = basename(parsed.pathname) || 'image';
	return { filename: name, contentType: typeOf(data, 'url', url), data };
}

/** What the bytes are: only JPEG, PNG and WebP are images the service animates. */
function typeOf(data: Uint8Array, field: string, value: string): string {
	const type = detectContentType(data);
	if (type === 'image/jpeg' || type === 'image/png' || type === 'image/webp') return type;
	throw refuse(field, value, `${value} is not a JPEG, PNG or WebP image${type ? ` (it reads as ${type})` : ''}.`);
}
