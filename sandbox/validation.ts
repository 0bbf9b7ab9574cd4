import {
	DEFAULT_DURATION_SECONDS,
	DEFAULT_RESOLUTION,
	MAX_DURATION_SECONDS,
	MAX_PROMPT_CODE_POINTS,
	MIN_DURATION_SECONDS,
	MODEL,
	RESOLUTIONS,
	type Resolution,
} from '../core/types';
import { LOOPBACK_HOSTS } from '../core/input/inputLimits';
import type { GenerateBody } from './jobs';
import { errorReply, type Reply } from './httpUtil';
import { describeErrors, validatorFor } from './openapi';

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Strict validation of POST /api/v1/generate: the specific codes of docs/api.md#errors first (they tell a
 * client which field), then the OpenAPI schema for everything else (unknown fields, formats).
 */
export function validateGenerateBody(body: unknown, insecureCallbacks: boolean): GenerateBody | Reply {
	if (!isObject(body)) return errorReply(400, 'invalid_request', 'The body must be a JSON object.');
	if (body.model !== MODEL) {
		return errorReply(400, 'invalid_model', `model must be "${MODEL}" (got ${JSON.stringify(body.model ?? null)}).`);
	}
	if (typeof body.prompt !== 'string' || body.prompt.trim() === '') {
		return errorReply(400, 'invalid_request', 'prompt is required and must be a non-empty string.');
	}
	const length = [...body.prompt].length;
	if (length > MAX_PROMPT_CODE_POINTS) {
		return errorReply(400, 'prompt_too_long', `prompt has ${length} characters; at most ${MAX_PROMPT_CODE_POINTS} are allowed.`);
	}
	if (body.resolution !== undefined && !RESOLUTIONS.includes(body.resolution as Resolution)) {
		return errorReply(400, 'invalid_resolution', `resolution must be one of ${RESOLUTIONS.join(', ')} (got ${JSON.stringify(body.resolution)}).`);
	}
	const duration = body.duration;
	const durationOutOfRange =
		typeof duration !== 'number' || !Number.isInteger(duration) || duration < MIN_DURATION_SECONDS || duration > MAX_DURATION_SECONDS;
	if (duration !== undefined && durationOutOfRange) {
		const range = `from ${MIN_DURATION_SECONDS} to ${MAX_DURATION_SECONDS}`;
		return errorReply(400, 'invalid_duration', `duration must be a whole number of seconds ${range} (got ${JSON.stringify(duration)}).`);
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
		const allowed = url && (url.protocol === 'https:' || (insecureCallbacks && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)));
		if (typeof body.callbackUrl !== 'string' || !allowed) {
			const hint = insecureCallbacks ? ' (or http:// to a loopback address)' : '';
			return errorReply(400, 'invalid_callback_url', `callbackUrl must be an https:// URL${hint} (got ${JSON.stringify(body.callbackUrl)}).`);
		}
	}
	const validate = validatorFor('#/components/schemas/GenerateRequest');
	if (!validate(body)) return errorReply(400, 'invalid_request', `Invalid request: ${describeErrors(validate.errors)}.`);
	return {
		model: MODEL,
		prompt: body.prompt,
		resolution: (body.resolution as Resolution | undefined) ?? DEFAULT_RESOLUTION,
		duration: (duration as number | undefined) ?? DEFAULT_DURATION_SECONDS,
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
