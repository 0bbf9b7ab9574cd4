import type { StreamedUploadInput, UploadFileInput } from '../types';
import type { FieldProblem } from '../errors/errors';
import { describe, requireObject, throwIfProblems } from './fieldProblems';
import { UPLOAD_TYPES } from './inputLimits';
import {
	GENERIC_TYPES,
	detectContentType,
	normaliseContentType,
	typesAgree,
} from './contentType';

/** Byte arrays from another realm (a jest sandbox, a worker) fail `instanceof Uint8Array`. */
function isBytes(value: unknown): value is Uint8Array {
	return (
		value instanceof Uint8Array ||
		(ArrayBuffer.isView(value) && (value as Partial<Uint8Array>).BYTES_PER_ELEMENT === 1)
	);
}

/** The name an upload gets when the user gave none. */
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
	const allowed: readonly string[] = UPLOAD_TYPES[kind];
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
	} else if (detected !== undefined && !typesAgree(contentType, detected)) {
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
