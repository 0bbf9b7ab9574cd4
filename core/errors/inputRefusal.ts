import { ValidationError, type FieldProblem } from './errors';
import { action, quote, sentence, type AnswerFacts } from './errorText';

/** The input field each 400/413 code is about. */
const FIELD_OF_CODE: Record<string, string> = {
	prompt_too_long: 'prompt',
	invalid_resolution: 'resolution',
	invalid_duration: 'duration',
	invalid_model: 'model',
	conflicting_inputs: 'videoUrl',
	invalid_callback_url: 'callbackUrl',
	file_too_large: 'data',
};

/** What a problem says when the service gave a code but no message. */
const PROBLEM_OF_CODE: Record<string, string> = {
	prompt_too_long: 'The prompt is too long: at most 2000 characters.',
	invalid_resolution: 'The resolution must be 720P, 1080P or 4K.',
	invalid_duration: 'The duration must be between 4 and 10 seconds.',
	invalid_model: 'The model must be omni-video.',
	conflicting_inputs: 'Image URL and Video URL cannot be combined: pick one.',
	invalid_callback_url: 'The callback URL must be a full https:// address.',
	file_too_large: 'The file is too large.',
};

const LABEL_OF_FIELD: Record<string, string> = {
	prompt: 'the prompt',
	resolution: 'the resolution',
	duration: 'the duration',
	model: 'the model',
	videoUrl: 'Image URL or Video URL',
	callbackUrl: 'the callback URL',
	data: 'the file',
};

/** 400, 413 and 422: the input was refused, naming the field where the code says which. */
export function refusedInput(a: AnswerFacts): ValidationError {
	const { status, code, context, ref, details } = a;
	const parsed = { message: a.message };
	// A 413 on a create is the JSON body, not a file: no field of the input is named `data`.
	const isBodyTooLarge = status === 413 && context.operation === 'generate';
	const field =
		(code && !isBodyTooLarge ? FIELD_OF_CODE[code] : undefined) ??
		(status === 413 && !isBodyTooLarge ? 'data' : undefined);
	const problems: FieldProblem[] = field
		? [
				{
					field,
					// The service does not echo the value; the adapter knows what it sent.
					value: undefined,
					message:
						parsed.message ??
						(code ? PROBLEM_OF_CODE[code] : undefined) ??
						'The service refused it.',
				},
			]
		: [];
	let happened = `The Omni Video API refused the request to ${action(context)}${quote(parsed.message)}`;
	let advice = 'Correct the input and run again.';
	if (code === 'idempotency_key_reused') {
		const key = context.idempotencyKey ? ` ${context.idempotencyKey}` : '';
		happened = `The idempotency key${key} was already used for a different request`;
		advice =
			'Use a new idempotency key for new input; reuse a key only to repeat exactly the same request.';
	} else if (isBodyTooLarge) {
		happened = `The request is too large for the Omni Video API${quote(parsed.message)}`;
		advice =
			'Shorten the prompt, and pass Image URL, Video URL and Callback URL as addresses (the file URL from Upload Image), never as a file\'s content.';
	} else if (status === 413) {
		happened = `The file is too large for the Omni Video API${quote(parsed.message)}`;
		advice = 'Use a smaller file, for example a shorter clip or a smaller image.';
	} else if (field) {
		advice = `Correct ${LABEL_OF_FIELD[field] ?? field} and run again.`;
	} else if (context.operation === 'getJob') {
		advice = 'Check the job ID and run again.';
	} else if (context.operation === 'upload') {
		advice = 'Check the file and run again.';
	}
	return new ValidationError(sentence(happened, ref, advice), problems, {
		...details,
		hint: advice,
	});
}

