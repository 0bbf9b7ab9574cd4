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
	type UploadImageInput,
} from './types';
import { ValidationError, type FieldProblem } from './errors';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const;
export const VIDEO_TYPES = ['video/mp4', 'video/quicktime'] as const;

function isBlank(value: unknown): boolean {
	return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

function describe(value: unknown): string {
	if (typeof value === 'string') return `"${value.length > 60 ? `${value.slice(0, 57)}...` : value}"`;
	if (value === undefined) return 'nothing';
	try {
		return JSON.stringify(value) ?? String(value);
	} catch {
		return String(value);
	}
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

function parseUrl(value: string): URL | undefined {
	try {
		return new URL(value);
	} catch {
		return undefined;
	}
}

function checkSourceUrl(field: 'imageUrl' | 'videoUrl', value: unknown, problems: FieldProblem[]): string | undefined {
	if (isBlank(value)) return undefined;
	const label = field === 'imageUrl' ? 'Image URL' : 'Video URL';
	if (typeof value !== 'string') {
		problems.push({ field, value, message: `${label} must be a text URL (got ${describe(value)}).` });
		return undefined;
	}
	const url = parseUrl(value.trim());
	if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
		problems.push({
			field,
			value,
			message: `${label} must be a full http(s) address, such as the file URL from Upload Image (got ${describe(value)}).`,
		});
		return undefined;
	}
	return value.trim();
}

function checkCallbackUrl(value: unknown, allowLoopbackHttp: boolean, problems: FieldProblem[]): string | undefined {
	if (isBlank(value)) return undefined;
	const url = typeof value === 'string' ? parseUrl(value.trim()) : undefined;
	const loopbackHttp = url?.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname) && allowLoopbackHttp;
	if (!url || (url.protocol !== 'https:' && !loopbackHttp)) {
		problems.push({
			field: 'callbackUrl',
			value,
			message: `Callback URL must be a full https:// address that the Omni Video service can reach (got ${describe(value)}).`,
		});
		return undefined;
	}
	return (value as string).trim();
}

function checkResolution(value: unknown, problems: FieldProblem[]): Resolution {
	if (isBlank(value)) return DEFAULT_RESOLUTION;
	const normalised = typeof value === 'string' ? value.trim().toUpperCase() : '';
	const match = RESOLUTIONS.find((r) => r === normalised);
	if (!match) {
		problems.push({
			field: 'resolution',
			value,
			message: `Resolution must be one of ${RESOLUTIONS.join(', ')} (got ${describe(value)}).`,
		});
		return DEFAULT_RESOLUTION;
	}
	return match;
}

function checkDuration(value: unknown, problems: FieldProblem[]): number {
	if (isBlank(value)) return DEFAULT_DURATION_SECONDS;
	const number =
		typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : NaN;
	if (!Number.isFinite(number) || number < MIN_DURATION_SECONDS || number > MAX_DURATION_SECONDS) {
		problems.push({
			field: 'duration',
			value,
			message: `Duration must be between ${MIN_DURATION_SECONDS} and ${MAX_DURATION_SECONDS} seconds (got ${describe(value)}).`,
		});
		return DEFAULT_DURATION_SECONDS;
	}
	return number;
}

function checkPrompt(value: unknown, problems: FieldProblem[]): string {
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
			message: `Prompt must be at most ${MAX_PROMPT_CODE_POINTS} characters (got ${length}).`,
		});
	}
	return value;
}

/**
 * Checks a Generate Video input against the spec and returns the request body to send.
 * Every problem is reported at once, with its field and the value given; nothing is sent when
 * anything is wrong.
 */
export function validateGenerateInput(
	input: GenerateVideoInput,
	options: { allowInsecureLoopbackCallback?: boolean } = {},
): GenerateVideoRequest {
	const problems: FieldProblem[] = [];
	const model = isBlank(input.model) ? MODEL : input.model;
	if (model !== MODEL) {
		problems.push({ field: 'model', value: input.model, message: `Model must be "${MODEL}" (got ${describe(input.model)}).` });
	}
	const prompt = checkPrompt(input.prompt, problems);
	const resolution = checkResolution(input.resolution, problems);
	const duration = checkDuration(input.duration, problems);
	const imageUrl = checkSourceUrl('imageUrl', input.imageUrl, problems);
	const videoUrl = checkSourceUrl('videoUrl', input.videoUrl, problems);
	if (imageUrl && videoUrl) {
		problems.push({
			field: 'videoUrl',
			value: input.videoUrl,
			message: 'Image URL and Video URL cannot be combined: give an image to animate or a video to transform, not both.',
		});
	}
	const callbackUrl = checkCallbackUrl(input.callbackUrl, options.allowInsecureLoopbackCallback === true, problems);
	throwIfProblems(problems);

	const request: GenerateVideoRequest = { model: MODEL, prompt, resolution, duration };
	if (imageUrl) request.imageUrl = imageUrl;
	if (videoUrl) request.videoUrl = videoUrl;
	if (callbackUrl) request.callbackUrl = callbackUrl;
	return request;
}

/** The mode the spec selects from the inputs given. */
export function generationMode(request: GenerateVideoRequest): GenerationMode {
	if (request.imageUrl) return 'image-to-video';
	if (request.videoUrl) return 'video-to-video';
	return 'text-to-video';
}

/** A job id as the user typed or mapped it: trimmed, non-empty, no spaces inside. */
export function validateJobId(id: unknown): string {
	const trimmed = typeof id === 'string' ? id.trim() : typeof id === 'number' ? String(id) : '';
	if (trimmed === '' || /\s/.test(trimmed)) {
		throwIfProblems([
			{
				field: 'jobId',
				value: id,
				message: `Job ID must be the id returned by Generate Video, such as job_abc123 (got ${describe(id)}).`,
			},
		]);
	}
	return trimmed;
}

function startsWith(bytes: Uint8Array, signature: number[], offset = 0): boolean {
	if (bytes.length < offset + signature.length) return false;
	return signature.every((byte, i) => bytes[offset + i] === byte);
}

const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** The media type the file's first bytes show, for the formats the API takes. */
export function detectContentType(bytes: Uint8Array): string | undefined {
	if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
	if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47])) return 'image/png';
	if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
	if (startsWith(bytes, ascii('ftypqt'), 4)) return 'video/quicktime';
	if (startsWith(bytes, ascii('ftyp'), 4)) return 'video/mp4';
	return undefined;
}

function normaliseContentType(value: unknown): string {
	if (typeof value !== 'string') return '';
	const type = value.split(';')[0].trim().toLowerCase();
	return type === 'image/jpg' ? 'image/jpeg' : type;
}

const EXTENSIONS: Record<string, string> = {
	'image/jpeg': 'jpg',
	'image/png': 'png',
	'image/webp': 'webp',
	'video/mp4': 'mp4',
	'video/quicktime': 'mov',
};

/** Checks a file for upload: a supported type (declared or detected, and agreeing), not empty. */
export function validateUploadInput(input: UploadImageInput, kind: 'image' | 'video' = 'image'): UploadImageInput {
	const problems: FieldProblem[] = [];
	const allowed: readonly string[] = kind === 'image' ? IMAGE_TYPES : VIDEO_TYPES;
	const data = input.data;
	if (!(data instanceof Uint8Array) || data.byteLength === 0) {
		problems.push({ field: 'data', value: data?.byteLength ?? data, message: 'The file is empty: pick the binary property that holds the file.' });
		throwIfProblems(problems);
	}
	const declared = normaliseContentType(input.contentType);
	const detected = detectContentType(data);
	const contentType = declared === '' || declared === 'application/octet-stream' ? (detected ?? declared) : declared;
	const label = kind === 'image' ? 'JPEG, PNG or WebP image' : 'MP4 or QuickTime video';
	if (!allowed.includes(contentType)) {
		problems.push({
			field: 'contentType',
			value: input.contentType,
			message: `The file must be a ${label} (got ${describe(input.contentType || detected || 'an unknown type')}).`,
		});
	} else if (detected && detected !== contentType && !(contentType === 'video/mp4' && detected === 'video/quicktime')) {
		problems.push({
			field: 'contentType',
			value: input.contentType,
			message: `The file says it is ${contentType} but its content is ${detected}: check the file.`,
		});
	}
	throwIfProblems(problems);
	const filename =
		typeof input.filename === 'string' && input.filename.trim() !== ''
			? input.filename.trim()
			: `upload.${EXTENSIONS[contentType]}`;
	return { filename, contentType, data };
}
