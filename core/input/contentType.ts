import { VIDEO_TYPES } from './inputLimits';

/* A file's media type: what its first bytes show, and what its label says once normalised. */

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
	if (bytes.length < offset + signature.length) return false;
	return signature.every((byte, i) => bytes[offset + i] === byte);
}

function ascii(text: string): number[] {
	return [...text].map((c) => c.charCodeAt(0));
}

/** ISO base-media brands that hold still images, not footage. */
const HEIF_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'mif1', 'msf1']);
const AVIF_BRANDS = new Set(['avif', 'avis']);

/** The media type the file's first bytes show, or undefined when they match no known format. */
export function detectContentType(bytes: Uint8Array): string | undefined {
	if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
	if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47])) return 'image/png';
	if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
	if (startsWith(bytes, ascii('GIF8'))) return 'image/gif';
	if (startsWith(bytes, ascii('ftyp'), 4)) {
		const brand = String.fromCharCode(...bytes.subarray(8, 12));
		if (brand.startsWith('qt')) return 'video/quicktime';
		// Named so that a refusal says "image/heic", not a puzzling "video/mp4".
		if (HEIF_BRANDS.has(brand)) return 'image/heic';
		if (AVIF_BRANDS.has(brand)) return 'image/avif';
		return 'video/mp4';
	}
	return undefined;
}

const TYPE_ALIASES: Record<string, string> = {
	'image/jpg': 'image/jpeg',
	'image/pjpeg': 'image/jpeg',
	'image/x-png': 'image/png',
	'video/x-quicktime': 'video/quicktime',
};

/** A declared type without parameters, in lower case, its legacy alias replaced; '' when none. */
export function normaliseContentType(value: unknown): string {
	if (typeof value !== 'string') return '';
	const type = value.split(';')[0].trim().toLowerCase();
	return TYPE_ALIASES[type] ?? type;
}

/** Types that say nothing about the content, so the bytes decide. */
export const GENERIC_TYPES: ReadonlySet<string> = new Set([
	'',
	'application/octet-stream',
	'binary/octet-stream',
]);

/** MP4 and QuickTime share one container; either label fits either file. */
export function typesAgree(declared: string, detected: string): boolean {
	if (declared === detected) return true;
	const video: readonly string[] = VIDEO_TYPES;
	return video.includes(declared) && video.includes(detected);
}
