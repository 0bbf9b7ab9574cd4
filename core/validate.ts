import {
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	MAX_DURATION_SECONDS,
	MAX_PROMPT_CODE_POINTS,
	MIN_DURATION_SECONDS,
	MODEL,
	RESOLUTIONS,
	type GenerateVideoInput,
	type GenerateVideoRequest,
	type GenerationMode,
	type Resolution,
	type StreamedUploadInput,
	type UploadFileInput,
} from './types';
import { ValidationError, type FieldProblem } from './errors';

/** The only hosts an insecure (http://) callback may name, and only when the caller allows it. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export const VIDEO_TYPES = ['video/mp4', 'video/quicktime'] as const;

/** Decimal numbers only: `Number()` alone would also take `0x10`, `1_0` is refused either way. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

const MAX_SHOWN_CHARS = 60;

/**
 * Longer addresses are the file's content pasted in (a data: URL, base64), not a link; servers and
 * proxies commonly refuse URLs past 8 KB, and the API's JSON body has a size limit of its own.
 */
export const MAX_URL_CHARS = 8192;

function isBlank(value: unknown): boolean {
	return (
		value === undefined || value === null || (typeof value === 'string' && value.trim() === '')
	);
}

/** The value as the user will recognise it in a message, cut short when long. */
function describe(value: unknown): string {
	if (value === undefined || value === null) return 'nothing';
	if (typeof value === 'string') {
		const chars = [...value];
		return chars.length > MAX_SHOWN_CHARS
			? `"${chars.slice(0, MAX_SHOWN_CHARS - 3).join('')}..."`
			: `"${value}"`;
	}
	// JSON.stringify would show NaN and Infinity as null.
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	let text: string;
	try {
		text = JSON.stringify(value) ?? String(value);
	} catch {
		text = String(value);
	}
	return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS - 3)}...` : text;
}

/** Throws one ValidationError naming every problem, so the user can fix them all at once. */
function throwIfProblems(problems: FieldProblem[]): void {
	if (problems.length === 0) return;
	const message =
		problems.length === 1
			? problems[0].message
			: `${problems.length} problems: ${problems.map((p) => p.message).join(' ')}`;
	throw new ValidationError(message, problems, { code: 'invalid_request' });
}

/** An absolute URL with one of the schemes given, or undefined. */
function absoluteUrl(value: string, schemes: readonly string[]): URL | undefined {
	// `new URL('https:host')` is accepted by the parser; the service wants the full form.
	if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return undefined;
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		return undefined;
	}
	return schemes.includes(url.protocol) && url.hostname !== '' ? url : undefined;
}

function checkModel(value: unknown, problems: FieldProblem[]): void {
	if (isBlank(value)) return;
	if (typeof value === 'string' && value.trim() === MODEL) return;
	problems.push({
		field: 'model',
		value,
		message: `Model must be "${MODEL}", the only model the API offers (got ${describe(value)}).`,
	});
}

function checkPrompt(value: unknown, problems: FieldProblem[]): string {
	if (value !== undefined && value !== null && typeof value !== 'string') {
		problems.push({
			field: 'prompt',
			value,
			message: `Prompt must be text describing the video (got ${describe(value)}).`,
		});
		return '';
	}
	if (typeof value !== 'string' || value.trim() === '') {
		problems.push({
			field: 'prompt',
			value,
			message: `Prompt is required: describe the video you want (got ${describe(value)}).`,
		});
		return '';
	}
	// The limit counts characters as people do: an emoji or an accented letter is one.
	const length = [...value].length;
	if (length > MAX_PROMPT_CODE_POINTS) {
		problems.push({
			field: 'prompt',
			value,
			message: `Prompt must be at most ${MAX_PROMPT_CODE_POINTS} characters (got ${length}): shorten it by ${length - MAX_PROMPT_CODE_POINTS}.`,
		});
	}
	return value;
}

function checkResolution(value: unknown, problems: FieldProblem[]): Resolution {
	if (isBlank(value)) return DEFAULT_RESOLUTION;
	const normalised = typeof value === 'string' ? value.trim().toUpperCase() : undefined;
	const match = RESOLUTIONS.find((r) => r === normalised);
	if (match) return match;
	problems.push({
		field: 'resolution',
		value,
		message: `Resolution must be one of ${RESOLUTIONS.join(', ')} (got ${describe(value)}).`,
	});
	return DEFAULT_RESOLUTION;
}

function checkDuration(value: unknown, problems: FieldProblem[]): number {
	if (isBlank(value)) return DEFAULT_DURATION_SECONDS;
	let seconds: number | undefined;
	if (typeof value === 'number') seconds = value;
	else if (typeof value === 'string' && DECIMAL.test(value.trim())) seconds = Number(value.trim());
	const range = `between ${MIN_DURATION_SECONDS} and ${MAX_DURATION_SECONDS} seconds`;
	if (seconds === undefined || Number.isNaN(seconds)) {
		problems.push({
			field: 'duration',
			value,
			message: `Duration must be a number of seconds, ${range} (got ${describe(value)}).`,
		});
		return DEFAULT_DURATION_SECONDS;
	}
	if (
		!Number.isFinite(seconds) ||
		seconds < MIN_DURATION_SECONDS ||
		seconds > MAX_DURATION_SECONDS
	) {
		problems.push({
			field: 'duration',
			value,
			message: `Duration must be ${range} (got ${describe(seconds)}).`,
		});
		return DEFAULT_DURATION_SECONDS;
	}
	// Fractions go through as given: whether they are allowed is the service's decision.
	return seconds;
}

/** A URL past MAX_URL_CHARS is reported once, without the parse errors that would follow. */
function isTooLong(field: string, value: unknown, what: string, problems: FieldProblem[]): boolean {
	if (typeof value !== 'string' || value.length <= MAX_URL_CHARS) return false;
	const label = { imageUrl: 'Image URL', videoUrl: 'Video URL', callbackUrl: 'Callback URL' }[field] ?? field;
	problems.push({
		field,
		value,
		message: `${label} must be ${what} of at most ${MAX_URL_CHARS} characters (got ${value.length}): pass an address, such as the file URL from Upload Image, not a file's content.`,
	});
	return true;
}

function checkSourceUrl(
	field: 'imageUrl' | 'videoUrl',
	value: unknown,
	problems: FieldProblem[],
): string | undefined {
	if (isBlank(value)) return undefined;
	const label = field === 'imageUrl' ? 'Image URL' : 'Video URL';
	const source = field === 'imageUrl' ? 'image' : 'video';
	if (isTooLong(field, value, `a link to the ${source}`, problems)) return undefined;
	if (typeof value === 'string' && absoluteUrl(value.trim(), ['https:', 'http:'])) {
		return value.trim();
	}
	problems.push({
		field,
		value,
		message: `${label} must be a full http:// or https:// address of the ${source}, such as the file URL from Upload Image (got ${describe(value)}).`,
	});
	return undefined;
}

function checkCallbackUrl(
	value: unknown,
	allowLoopbackHttp: boolean,
	problems: FieldProblem[],
): string | undefined {
	if (isBlank(value)) return undefined;
	if (isTooLong('callbackUrl', value, 'an address', problems)) return undefined;
	if (typeof value === 'string') {
		const url = absoluteUrl(value.trim(), ['https:', 'http:']);
		const loopback = url !== undefined && LOOPBACK_HOSTS.has(url.hostname);
		if (url && (url.protocol === 'https:' || (allowLoopbackHttp && loopback))) return value.trim();
	}
	const alternative = allowLoopbackHttp
		? ', or an http:// address on this machine (localhost)'
		: '';
	problems.push({
		field: 'callbackUrl',
		value,
		message: `Callback URL must be a full https:// address that the Omni Video service can reach${alternative} (got ${describe(value)}).`,
	});
	return undefined;
}

/** Refuses a missing or non-object input (null from an expression, a string) as a user error. */
function requireObject<T>(input: T, what: string, example: string): void {
	if (input !== null && typeof input === 'object' && !Array.isArray(input)) return;
	throwIfProblems([
		{
			field: 'input',
			value: input,
			message: `${what} needs its fields as an object, such as ${example} (got ${describe(input)}).`,
		},
	]);
}

/** Checks a Generate Video input against the API's rules (docs/api.md#validation) and returns the request body to send. */
export function validateGenerateInput(
	input: GenerateVideoInput,
	options: { allowInsecureLoopbackCallback?: boolean } = {},
): GenerateVideoRequest {
	requireObject(input, 'Generate Video', '{ "prompt": "a red kite over the sea" }');
	const problems: FieldProblem[] = [];
	checkModel(input.model, problems);
	const prompt = checkPrompt(input.prompt, problems);
	const resolution = checkResolution(input.resolution, problems);
	const duration = checkDuration(input.duration, problems);
	const imageUrl = checkSourceUrl('imageUrl', input.imageUrl, problems);
	const videoUrl = checkSourceUrl('videoUrl', input.videoUrl, problems);
	// Reported even when one of the two is malformed: the user has to drop one either way.
	if (!isBlank(input.imageUrl) && !isBlank(input.videoUrl)) {
		problems.push({
			field: 'videoUrl',
			value: input.videoUrl,
			message:
				'Image URL and Video URL cannot be combined: pick one, an image to animate or a video to transform.',
		});
	}
	const callbackUrl = checkCallbackUrl(
		input.callbackUrl,
		options.allowInsecureLoopbackCallback === true,
		problems,
	);
	throwIfProblems(problems);

	const request: GenerateVideoRequest = { model: MODEL, prompt, resolution, duration };
	if (imageUrl !== undefined) request.imageUrl = imageUrl;
	if (videoUrl !== undefined) request.videoUrl = videoUrl;
	if (callbackUrl !== undefined) request.callbackUrl = callbackUrl;
	return request;
}

/** The mode the source selects (docs/api.md#overview): image, video, or none. */
export function generationMode(request: GenerateVideoRequest): GenerationMode {
	if (request.imageUrl) return 'image-to-video';
	if (request.videoUrl) return 'video-to-video';
	return 'text-to-video';
}

/** A job id as the user typed or mapped it: trimmed, non-empty, no spaces inside, else refused. */
export function validateJobId(id: unknown): string {
	let trimmed = '';
	if (typeof id === 'string') trimmed = id.trim();
	// An expression may hand over a numeric id; ids are opaque, so its text is the id.
	else if (typeof id === 'number' && Number.isFinite(id)) trimmed = String(id);
	if (trimmed === '' || /\s/.test(trimmed)) {
		throwIfProblems([
			{
				field: 'jobId',
				value: id,
				message: `Job ID must be the id returned by Generate Video, such as job_abc123, without spaces (got ${describe(id)}).`,
			},
		]);
	}
	return trimmed;
}

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

function normaliseContentType(value: unknown): string {
	if (typeof value !== 'string') return '';
	const type = value.split(';')[0].trim().toLowerCase();
	return TYPE_ALIASES[type] ?? type;
}

/** Types that say nothing about the content, so the bytes decide. */
const GENERIC_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

/** MP4 and QuickTime share one container; either label fits either file. */
function agrees(declared: string, detected: string): boolean {
	if (declared === detected) return true;
	const video: readonly string[] = VIDEO_TYPES;
	return video.includes(declared) && video.includes(detected);
}

/** Byte arrays from another realm (a jest sandbox, a worker) fail `instanceof Uint8Array`. */
function isBytes(value: unknown): value is Uint8Array {
	return (
		value instanceof Uint8Array ||
		(ArrayBuffer.isView(value) && (value as Partial<Uint8Array>).BYTES_PER_ELEMENT === 1)
	);
}

const EXTENSIONS: Record<string, string> = {
	'image/jpeg': 'jpg',
	'image/png': 'png',
	'image/webp': 'webp',
	'video/mp4': 'mp4',
	'video/quicktime': 'mov',
};

/** Checks a file for upload: not empty, a supported type (declared or detected, and agreeing). */
export function validateUploadInput(
	input: UploadFileInput,
	kind: 'image' | 'video' = 'image',
): UploadFileInput {
	requireObject(input, 'Upload Image', '{ "data": <the file\'s bytes>, "filename": "photo.png" }');
	const { filename, contentType } = checkUploadFile(input, input.data, kind);
	return { filename, contentType, data: input.data };
}

/**
 * The same checks for a file sent as a stream: its type is told from its first bytes (`head`),
 * its emptiness from the size its source announced.
 */
export function validateStreamedUpload(
	input: StreamedUploadInput,
	kind: 'image' | 'video' = 'image',
): StreamedUploadInput {
	const { filename, contentType } = checkUploadFile(input, input.size > 0 ? input.head : new Uint8Array(0), kind);
	return { ...input, filename, contentType };
}

function checkUploadFile(
	input: { filename?: unknown; contentType?: unknown },
	data: unknown,
	kind: 'image' | 'video',
): { filename: string; contentType: string } {
	const problems: FieldProblem[] = [];
	const allowed: readonly string[] = kind === 'image' ? IMAGE_TYPES : VIDEO_TYPES;
	const label = kind === 'image' ? 'a JPEG, PNG or WebP image' : 'an MP4 or QuickTime video';
	const bytes = isBytes(data) && data.byteLength > 0 ? data : undefined;
	if (!bytes) {
		problems.push({
			field: 'data',
			value: isBytes(data) ? data.byteLength : data,
			message: `The file is empty: check that the input property really holds ${label}.`,
		});
	}
	const declared = normaliseContentType(input.contentType);
	const detected = bytes ? detectContentType(bytes) : undefined;
	const contentType = GENERIC_TYPES.has(declared) ? detected : declared;
	if (contentType === undefined) {
		if (bytes) {
			problems.push({
				field: 'contentType',
				value: input.contentType,
				message: `The file's type could not be recognised: it must be ${label}. Check the file, or set its MIME type (got ${describe(input.contentType)}).`,
			});
		}
	} else if (!allowed.includes(contentType)) {
		problems.push({
			field: 'contentType',
			value: input.contentType,
			message: `The file must be ${label} (got ${describe(contentType)}).`,
		});
	} else if (detected !== undefined && !agrees(contentType, detected)) {
		problems.push({
			field: 'contentType',
			value: input.contentType,
			message: `The file is declared as ${contentType} but its content is ${detected}: check the file or correct its MIME type.`,
		});
	}
	throwIfProblems(problems);

	// Both are set here: their absence was reported above.
	const type = contentType as string;
	const filename =
		typeof input.filename === 'string' && input.filename.trim() !== ''
			? input.filename.trim()
			: `upload.${EXTENSIONS[type]}`;
	return { filename, contentType: type };
}
