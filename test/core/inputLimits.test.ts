import { ValidationError } from '../../core/errors/errors';
import { GENERATE_LIMITS, UPLOAD_TYPES } from '../../core/input/inputLimits';
import { validateGenerateInput } from '../../core/input/validateGenerate';
import { validateUploadInput } from '../../core/input/validateUpload';

/*
 * The limits core exports for other readers (the sandbox) are the ones its validation enforces:
 * each is accepted at its bound and refused one step past it.
 */

const prompt = 'A red fox running through snow';

function refusedField(run: () => unknown): string | undefined {
	try {
		run();
		return undefined;
	} catch (error) {
		// Anything but a refusal of the input fails the expectation with its message.
		return error instanceof ValidationError ? error.problems[0].field : String(error);
	}
}

describe('exported input limits', () => {
	const limits = GENERATE_LIMITS;

	it('prompt length', () => {
		const atLimit = 'é'.repeat(limits.maxPromptCharacters);
		expect(validateGenerateInput({ prompt: atLimit }).prompt).toBe(atLimit);
		expect(refusedField(() => validateGenerateInput({ prompt: `${atLimit}é` }))).toBe('prompt');
	});

	it('duration bounds and default', () => {
		expect(validateGenerateInput({ prompt, duration: limits.minDurationSeconds }).duration).toBe(limits.minDurationSeconds);
		expect(validateGenerateInput({ prompt, duration: limits.maxDurationSeconds }).duration).toBe(limits.maxDurationSeconds);
		expect(refusedField(() => validateGenerateInput({ prompt, duration: limits.minDurationSeconds - 1 }))).toBe('duration');
		expect(refusedField(() => validateGenerateInput({ prompt, duration: limits.maxDurationSeconds + 1 }))).toBe('duration');
		expect(validateGenerateInput({ prompt }).duration).toBe(limits.defaultDurationSeconds);
	});

	it('resolutions, default resolution and model', () => {
		for (const resolution of limits.resolutions) {
			expect(validateGenerateInput({ prompt, resolution }).resolution).toBe(resolution);
		}
		const request = validateGenerateInput({ prompt });
		expect(request.resolution).toBe(limits.defaultResolution);
		expect(request.model).toBe(limits.model);
		expect(refusedField(() => validateGenerateInput({ prompt, model: `${limits.model}-2` }))).toBe('model');
	});

	it('URL length', () => {
		const base = 'https://files.example.com/';
		const atLimit = base + 'a'.repeat(limits.maxUrlChars - base.length);
		expect(validateGenerateInput({ prompt, imageUrl: atLimit }).imageUrl).toBe(atLimit);
		expect(refusedField(() => validateGenerateInput({ prompt, imageUrl: `${atLimit}a` }))).toBe('imageUrl');
	});

	it('loopback hosts are the only http callbacks allowed, and only when asked', () => {
		for (const host of limits.loopbackHosts) {
			const callbackUrl = `http://${host}:5678/hook`;
			const options = { allowInsecureLoopbackCallback: true };
			expect(validateGenerateInput({ prompt, callbackUrl }, options).callbackUrl).toBe(callbackUrl);
			expect(refusedField(() => validateGenerateInput({ prompt, callbackUrl }))).toBe('callbackUrl');
		}
		const options = { allowInsecureLoopbackCallback: true };
		expect(refusedField(() => validateGenerateInput({ prompt, callbackUrl: 'http://10.0.0.1/hook' }, options))).toBe('callbackUrl');
	});

	it('upload types by kind', () => {
		const data = new Uint8Array([1, 2, 3]);
		for (const kind of ['image', 'video'] as const) {
			for (const contentType of UPLOAD_TYPES[kind]) {
				// Bytes of no known format: the declared type decides.
				expect(validateUploadInput({ filename: 'f', contentType, data }, kind).contentType).toBe(contentType);
			}
			const other = kind === 'image' ? UPLOAD_TYPES.video[0] : UPLOAD_TYPES.image[0];
			expect(refusedField(() => validateUploadInput({ filename: 'f', contentType: other, data }, kind))).toBe('contentType');
		}
	});
});
