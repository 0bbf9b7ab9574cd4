import { RESOLUTIONS } from '../core/types';
import type { GenerateBody } from './jobs';
import { errorReply, type Reply } from './httpUtil';
import { describeErrors, validatorFor } from './openapi';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Strict validation of POST /api/v1/generate: the specific codes of docs/api.md#errors first (they tell a
 * client which field), then the OpenAPI schema for everything else (unknown fields, formats).
 */
export function validateGenerateBody(body: unknown, insecureCallbacks: boolean): GenerateBody | Reply {
	if (!isObject(body)) return errorReply(400, 'invalid_request', 'The body must be a JSON object.');
	if (body.model !== 'omni-video') {
		return errorReply(400, 'invalid_model', `model must be "omni-video" (got ${JSON.stringify(body.model ?? null)}).`);
	}
	if (typeof body.prompt !== 'string' || body.prompt.trim() === '') {
		return errorReply(400, 'invalid_request', 'prompt is required and must be a non-empty string.');
	}
	const length = [...body.prompt].length;
	if (length > 2000) return errorReply(400, 'prompt_too_long', `prompt has ${length} characters; at most 2000 are allowed.`);
	if (body.resolution !== undefined && !RESOLUTIONS.includes(body.resolution as (typeof RESOLUTIONS)[number])) {
		return errorReply(400, 'invalid_resolution', `resolution must be one of 720P, 1080P, 4K (got ${JSON.stringify(body.resolution)}).`);
	}
	const duration = body.duration;
	if (duration !== undefined && (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 4 || duration > 10)) {
		return errorReply(400, 'invalid_duration', `duration must be a whole number of seconds from 4 to 10 (got ${JSON.stringify(duration)}).`);
	}
	if (body.imageUrl !== undefined && body.videoUrl !== undefined) {
		return errorReply(400, 'conflicting_inputs', 'Give imageUrl or videoUrl, not both.');
	}
	if (body.callbackUrl !== undefined) {
		let url: URL | undefined;
		try {
			url = new URL(String(body.callbackUrl));
		} catch {
			url = undefined;
		}
		const allowed = url && (url.protocol === 'https:' || (insecureCallbacks && url.protocol === 'http:' && LOOPBACK.has(url.hostname)));
		if (typeof body.callbackUrl !== 'string' || !allowed) {
			const hint = insecureCallbacks ? ' (or http:// to a loopback address)' : '';
			return errorReply(400, 'invalid_callback_url', `callbackUrl must be an https:// URL${hint} (got ${JSON.stringify(body.callbackUrl)}).`);
		}
	}
	const validate = validatorFor('#/components/schemas/GenerateRequest');
	if (!validate(body)) return errorReply(400, 'invalid_request', `Invalid request: ${describeErrors(validate.errors)}.`);
	return {
		model: 'omni-video',
		prompt: body.prompt,
		resolution: (body.resolution as GenerateBody['resolution']) ?? '1080P',
		duration: (duration as number | undefined) ?? 8,
		...(body.imageUrl !== undefined ? { imageUrl: body.imageUrl as string } : {}),
		...(body.videoUrl !== undefined ? { videoUrl: body.videoUrl as string } : {}),
		...(body.callbackUrl !== undefined ? { callbackUrl: body.callbackUrl as string } : {}),
	};
}

/** POST /api/upload: the schema, and the size limit as a 413. */
export function validateUploadBody(
	body: unknown,
	maxBytes: number,
): { filename: string; contentType: string; size: number } | Reply {
	const validate = validatorFor('#/components/schemas/UploadRequest');
	if (!validate(body)) return errorReply(400, 'invalid_request', `Invalid upload request: ${describeErrors(validate.errors)}.`);
	const upload = body as { filename: string; contentType: string; size: number };
	if (upload.size > maxBytes) {
		return errorReply(413, 'file_too_large', `The file has ${upload.size} bytes; at most ${maxBytes} are accepted.`);
	}
	return upload;
}

export function isReply(value: unknown): value is Reply {
	return isObject(value) && typeof value.status === 'number' && isObject(value.headers);
}
