import type { ZObject } from 'zapier-platform-core';
import {
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	validateGenerateInput,
	type GenerateVideoInput,
	type OmniVideoClient,
} from '../../../core';
import { uploadFileField } from '../files';
import type { GenerateInput } from './generateVideoFields';

const PENDING_UPLOAD = 'https://upload.pending.invalid/file';

/** A yes/no field as Zapier hands it: a boolean, or its text. */
export function isYes(value: unknown): boolean {
	return value === true || value === 'true' || value === 'yes';
}

/** A field left empty (or only spaces) counts as not given. */
export function blankToUndefined(value: unknown): string | undefined {
	const text = typeof value === 'string' ? value.trim() : '';
	return text === '' ? undefined : text;
}

/**
 * Checks everything, uploads file fields to Omni Video storage (only then: bad input costs no
 * request), and returns the input for the create.
 */
export async function prepareInput(
	z: ZObject,
	client: OmniVideoClient,
	fields: GenerateInput,
	options: { allowInsecureLoopbackCallback: boolean; callbackUrl?: string; deadlineAtMs: number },
): Promise<GenerateVideoInput> {
	const imageFile = blankToUndefined(fields.imageFile);
	const videoFile = blankToUndefined(fields.videoFile);
	const input: GenerateVideoInput = {
		prompt: String(fields.prompt ?? ''),
		resolution: blankToUndefined(fields.resolution) ?? DEFAULT_RESOLUTION,
		duration: blankToUndefined(String(fields.duration ?? '')) ?? DEFAULT_DURATION_SECONDS,
		imageUrl: blankToUndefined(fields.imageUrl),
		videoUrl: blankToUndefined(fields.videoUrl),
		callbackUrl: options.callbackUrl,
	};
	if ((imageFile && input.imageUrl) || (videoFile && input.videoUrl)) {
		throw new z.errors.Error('Give the source once: either its URL or its file, not both.', 'invalid_request', 400);
	}
	validateGenerateInput(
		{
			...input,
			imageUrl: input.imageUrl ?? (imageFile && PENDING_UPLOAD),
			videoUrl: input.videoUrl ?? (videoFile && PENDING_UPLOAD),
		},
		{ allowInsecureLoopbackCallback: options.allowInsecureLoopbackCallback },
	);
	const { deadlineAtMs } = options;
	if (imageFile) {
		input.imageUrl = (await uploadFileField(z, client, imageFile, { field: 'Image File', kind: 'image', fallbackName: 'image', deadlineAtMs })).fileUrl;
	}
	if (videoFile) {
		input.videoUrl = (await uploadFileField(z, client, videoFile, { field: 'Video File', kind: 'video', fallbackName: 'video.mp4', deadlineAtMs })).fileUrl;
	}
	return input;
}
