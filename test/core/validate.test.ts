import { closeCoreSandboxes, coreSandbox } from '../support/coreHarness';
import { ValidationError } from '../../core/errors/errors';
import { generationMode, validateGenerateInput } from '../../core/input/validateGenerate';
import { validateJobId } from '../../core/input/validateJobId';
import { validateUploadInput } from '../../core/input/validateUpload';
import { callbackUrlProblem, isAcceptedCallbackUrl } from '../../core/input/validateUrls';
import type { GenerateVideoInput } from '../../core/types';

const good: GenerateVideoInput = { prompt: 'A red fox running through snow' };
const long = (n: number, char = 'a') => char.repeat(n);

/** [what, input, field named, value reported] */
const badRequests: Array<[string, GenerateVideoInput, string, unknown]> = [
	['missing prompt', { prompt: undefined as unknown as string }, 'prompt', undefined],
	['empty prompt', { prompt: '' }, 'prompt', ''],
	['blank prompt', { prompt: '   \n ' }, 'prompt', '   \n '],
	['prompt not text', { prompt: 42 as unknown as string }, 'prompt', 42],
	['prompt of 2001 characters', { prompt: long(2001) }, 'prompt', long(2001)],
	['prompt of 2001 emoji', { prompt: long(2001, '🎬') }, 'prompt', long(2001, '🎬')],
	['unknown resolution', { ...good, resolution: '8K' }, 'resolution', '8K'],
	['resolution without unit', { ...good, resolution: '1080' }, 'resolution', '1080'],
	['resolution not text', { ...good, resolution: 1080 as unknown as string }, 'resolution', 1080],
	['duration too short', { ...good, duration: 3 }, 'duration', 3],
	['duration too long', { ...good, duration: 12 }, 'duration', 12],
	['negative duration', { ...good, duration: -5 }, 'duration', -5],
	['duration not a number', { ...good, duration: 'eight' }, 'duration', 'eight'],
	['duration infinite', { ...good, duration: Infinity }, 'duration', Infinity],
	['duration NaN', { ...good, duration: NaN }, 'duration', NaN],
	['wrong model', { ...good, model: 'sora-2' }, 'model', 'sora-2'],
	['image URL not a URL', { ...good, imageUrl: 'frame.png' }, 'imageUrl', 'frame.png'],
	['image URL on ftp', { ...good, imageUrl: 'ftp://files.example.com/a.png' }, 'imageUrl', 'ftp://files.example.com/a.png'],
	['video URL not a URL', { ...good, videoUrl: 'not a url' }, 'videoUrl', 'not a url'],
	['image and video together', { ...good, imageUrl: 'https://x.test/a.png', videoUrl: 'https://x.test/b.mp4' }, 'videoUrl', 'https://x.test/b.mp4'],
	['http callback', { ...good, callbackUrl: 'http://hooks.example.com/omni' }, 'callbackUrl', 'http://hooks.example.com/omni'],
	['callback not a URL', { ...good, callbackUrl: 'hooks.example.com' }, 'callbackUrl', 'hooks.example.com'],
	['http loopback callback without the switch', { ...good, callbackUrl: 'http://127.0.0.1:5678/hook' }, 'callbackUrl', 'http://127.0.0.1:5678/hook'],
	['callback with another scheme', { ...good, callbackUrl: 'javascript:alert(1)' }, 'callbackUrl', 'javascript:alert(1)'],
	['image URL not text', { ...good, imageUrl: { url: 'https://x' } as unknown as string }, 'imageUrl', { url: 'https://x' }],
];

afterEach(closeCoreSandboxes);

describe('Generate Video validation', () => {
	it.each(badRequests)('refuses %s, naming the field and the value, and sends nothing', async (_what, input, field, value) => {
		const { time, sandbox, sent, client } = await coreSandbox();
		const error = await time.run(client.generateVideo(input)).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ValidationError);
		const problem = (error as ValidationError).problems.find((p) => p.field === field);
		expect(problem).toBeDefined();
		if (typeof value === 'number' && Number.isNaN(value)) expect(problem?.value).toBeNaN();
		else expect(problem?.value).toEqual(value);
		expect(sent.requests).toHaveLength(0);
		expect(sandbox.journal).toHaveLength(0);
	});

	it('reports every problem of one request at once', () => {
		const error = (() => {
			try {
				validateGenerateInput({ prompt: '', resolution: '2K', duration: 30, callbackUrl: 'http://x.test' });
			} catch (e) {
				return e as ValidationError;
			}
			throw new Error('expected a ValidationError');
		})();
		expect(error.problems.map((p) => p.field).sort()).toEqual(['callbackUrl', 'duration', 'prompt', 'resolution']);
		expect(error.message).toContain('Duration must be between 4 and 10 seconds (got 30)');
		expect(error.message).toMatch(/^4 problems/);
	});

	it('fills in the spec defaults and the model', () => {
		expect(validateGenerateInput(good)).toEqual({ model: 'omni-video', prompt: good.prompt, resolution: '1080P', duration: 8 });
	});

	it.each([
		['1080p', '1080P'],
		['720p', '720P'],
		['4k', '4K'],
		[' 4K ', '4K'],
		['', '1080P'],
	])('normalises resolution %j to %s', (given, expected) => {
		expect(validateGenerateInput({ ...good, resolution: given }).resolution).toBe(expected);
	});

	it('takes durations as numbers or numeric text, and passes fractions on', () => {
		expect(validateGenerateInput({ ...good, duration: ' 6 ' }).duration).toBe(6);
		expect(validateGenerateInput({ ...good, duration: 4 }).duration).toBe(4);
		expect(validateGenerateInput({ ...good, duration: 10 }).duration).toBe(10);
		expect(validateGenerateInput({ ...good, duration: 5.5 }).duration).toBe(5.5);
		expect(validateGenerateInput({ ...good, duration: '' }).duration).toBe(8);
	});

	it('counts the prompt in code points: 2000 emoji are allowed', () => {
		const prompt = long(2000, '🎬');
		expect(prompt.length).toBe(4000);
		expect(validateGenerateInput({ prompt }).prompt).toBe(prompt);
	});

	it('selects the mode from the source given and drops blank sources', () => {
		expect(generationMode(validateGenerateInput({ ...good, imageUrl: '  ' }))).toBe('text-to-video');
		expect(generationMode(validateGenerateInput({ ...good, imageUrl: 'https://x.test/a.png' }))).toBe('image-to-video');
		expect(generationMode(validateGenerateInput({ ...good, videoUrl: 'https://x.test/a.mp4' }))).toBe('video-to-video');
		expect(validateGenerateInput({ ...good, imageUrl: '' })).not.toHaveProperty('imageUrl');
	});

	it('accepts https callbacks, and http loopback ones only with the switch', () => {
		expect(validateGenerateInput({ ...good, callbackUrl: 'https://n8n.example.com/webhook-waiting/1' }).callbackUrl).toBe(
			'https://n8n.example.com/webhook-waiting/1',
		);
		const local = { ...good, callbackUrl: 'http://127.0.0.1:5678/hook' };
		expect(validateGenerateInput(local, { allowInsecureLoopbackCallback: true }).callbackUrl).toBe(local.callbackUrl);
		expect(() => validateGenerateInput({ ...good, callbackUrl: 'http://example.com/hook' }, { allowInsecureLoopbackCallback: true })).toThrow(
			ValidationError,
		);
	});
});

describe('job id and upload validation', () => {
	it.each(['', '   ', 'job 1', undefined, null, {}])('refuses job id %j', (id) => {
		expect(() => validateJobId(id)).toThrow(expect.objectContaining({ problems: [expect.objectContaining({ field: 'jobId' })] }));
	});

	it('trims a job id and keeps it opaque', () => {
		expect(validateJobId('  job_abc/../1 ')).toBe('job_abc/../1');
		expect(validateJobId('7f3c')).toBe('7f3c');
	});

	const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
	const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0]);
	const webp = new Uint8Array([...'RIFF'].map((c) => c.charCodeAt(0)).concat([0, 0, 0, 0], [...'WEBP'].map((c) => c.charCodeAt(0))));

	it('detects the type of files sent as octet-stream and names them', () => {
		expect(validateUploadInput({ filename: '', contentType: 'application/octet-stream', data: webp })).toMatchObject({
			contentType: 'image/webp',
			filename: 'upload.webp',
		});
		expect(validateUploadInput({ filename: 'a.jpg', contentType: 'image/jpg', data: jpeg }).contentType).toBe('image/jpeg');
		expect(validateUploadInput({ filename: 'a.png', contentType: 'image/png; charset=binary', data: png }).contentType).toBe('image/png');
	});

	it.each([
		['text file', 'text/plain', new Uint8Array([1, 2, 3])],
		['empty file', 'image/png', new Uint8Array()],
		['PNG bytes declared as JPEG', 'image/jpeg', png],
		['unknown bytes without a type', '', new Uint8Array([1, 2, 3])],
	])('refuses a %s', (_what, contentType, data) => {
		expect(() => validateUploadInput({ filename: 'f', contentType, data })).toThrow(ValidationError);
	});

	it('takes MP4 and QuickTime for video sources only', () => {
		const mp4 = new Uint8Array([0, 0, 0, 0x18, ...[...'ftypisom'].map((c) => c.charCodeAt(0))]);
		expect(validateUploadInput({ filename: 'a.mp4', contentType: 'video/mp4', data: mp4 }, 'video').contentType).toBe('video/mp4');
		expect(() => validateUploadInput({ filename: 'a.mp4', contentType: 'video/mp4', data: mp4 }, 'image')).toThrow(ValidationError);
	});
});

describe('isAcceptedCallbackUrl', () => {
	it('accepts what the create would: https://, and http:// on loopback only when the caller allows it', () => {
		expect(isAcceptedCallbackUrl('https://flows.example.com/v1/flow-runs/r1/waitpoints/w1')).toBe(true);
		expect(isAcceptedCallbackUrl('http://127.0.0.1:8080/hook', { allowInsecureLoopbackCallback: true })).toBe(true);
		for (const refused of ['http://127.0.0.1:8080/hook', 'http://flows.example.com/hook', 'flows.example.com', '', undefined]) {
			expect(isAcceptedCallbackUrl(refused)).toBe(false);
		}
		expect(isAcceptedCallbackUrl('http://flows.internal:8080/hook', { allowInsecureLoopbackCallback: true })).toBe(false);
	});

	it('agrees with the create on every callback URL it refuses', () => {
		for (const [, input, field] of badRequests) {
			if (field === 'callbackUrl') expect(isAcceptedCallbackUrl(input.callbackUrl)).toBe(false);
		}
	});
});

describe('callbackUrlProblem: can the service call this resume URL back?', () => {
	it.each([
		'https://n8n.example.com/webhook-waiting/42',
		'https://flows.example.co.uk:8443/v1/flow-runs/r1',
		'https://8.8.8.8/hook',
		'https://172.32.0.1/hook', // just outside 172.16.0.0/12
		'https://[2001:db8::1]/hook',
	])('%s: yes', (url) => {
		expect(callbackUrlProblem(url)).toBeUndefined();
	});

	it.each([
		['http://localhost:5678/webhook-waiting/42', /plain http:\/\//],
		['http://n8n.example.com/webhook-waiting/42', /plain http:\/\//],
		['https://localhost:5678/webhook-waiting/42', /not reachable from the internet/],
		['https://127.0.0.1/hook', /not reachable/],
		['https://10.1.2.3/hook', /not reachable/],
		['https://172.16.5.4/hook', /not reachable/],
		['https://192.168.1.20:5678/hook', /not reachable/],
		['https://169.254.10.10/hook', /not reachable/],
		['https://100.64.0.7/hook', /not reachable/],
		['https://[::1]/hook', /not reachable/],
		['https://[fd00::5]/hook', /not reachable/],
		['https://[fe80::1]/hook', /not reachable/],
		['https://n8n/hook', /not reachable/],
		['https://n8n.local/hook', /not reachable/],
		['https://n8n.internal/hook', /not reachable/],
		['https://router.home.arpa/hook', /not reachable/],
		['webhook-waiting/42', /not a full http\(s\) address/],
		[undefined, /not a full http\(s\) address/],
	])('%s: no, %s', (url, reason) => {
		expect(callbackUrlProblem(url)).toMatch(reason);
	});

	it('lets the local sandbox call plain http on this machine only', () => {
		expect(callbackUrlProblem('http://127.0.0.1:5678/webhook-waiting/1', { allowInsecureLoopbackCallback: true })).toBeUndefined();
		expect(callbackUrlProblem('http://localhost:5678/webhook-waiting/1', { allowInsecureLoopbackCallback: true })).toBeUndefined();
		expect(callbackUrlProblem('http://192.168.1.20:5678/webhook-waiting/1', { allowInsecureLoopbackCallback: true })).toMatch(/plain http/);
	});

	it('names the origin it refused, never the path (the resume URL holds the execution id)', () => {
		expect(callbackUrlProblem('http://localhost:5678/webhook-waiting/42')).toContain('http://localhost:5678');
		expect(callbackUrlProblem('http://localhost:5678/webhook-waiting/42')).not.toContain('webhook-waiting');
	});
});
