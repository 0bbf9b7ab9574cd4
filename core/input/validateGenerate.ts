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
} from '../types';
import type { FieldProblem } from '../errors/errors';
import { describe, isBlank, requireObject, throwIfProblems } from './fieldProblems';
import { checkCallbackUrl, checkSourceUrl } from './validateUrls';

/** Decimal numbers only: `Number()` alone would also take `0x10`, `1_0` is refused either way. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

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
