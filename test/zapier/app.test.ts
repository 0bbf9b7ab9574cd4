import { startSandbox, type Sandbox } from '../../sandbox';
import { startReceiver } from '../support/receiver';
import { authFor, fileHost, plainWebsite, runStep, runWithCallbackUrl, streamingFileHost, zapierErrorFields } from '../support/zapier/harness';
import { addBearerForApi } from '../../zapier/src/host';

/**
 * The Zapier app run by Zapier's own handler (createAppTester) against the sandbox over real
 * HTTP: authentication, every operation, the callback round trip into performResume, the editor's
 * sample path, and how errors reach the user.
 */
const SPEED = 20;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

let sandbox: Sandbox;

beforeAll(async () => {
	sandbox = await startSandbox({ port: 0, speed: SPEED, insecureCallbacks: true });
});
afterAll(async () => {
	await sandbox.close();
});

const auth = (key = sandbox.keys.premium, extra: Record<string, string> = {}) => authFor(sandbox.url, key, extra);
const journalFor = (path: string) => sandbox.journal.filter((entry) => entry.path.startsWith(path));

describe('authentication', () => {
	const test = (authData: Record<string, string>) => runStep('authentication.test', { authData }).then(
		() => undefined,
		(thrown: Error) => thrown,
	);

	it('accepts a good key at the cost of one request, and labels the connection so that two keys differ', async () => {
		const before = sandbox.journal.length;
		const result = (await runStep('authentication.test', { authData: auth() })) as Record<string, string>;
		expect(result).toEqual({ plan: 'premium', host: new URL(sandbox.url).host, keyId: expect.stringMatching(/^[0-9a-f]{6}$/) });
		expect(sandbox.journal.length - before).toBe(1);
		const label = await runStep('authentication.connectionLabel', { authData: auth(), inputData: result });
		expect(label).toBe(`Premium · ${new URL(sandbox.url).host} · key ${result.keyId}`);
		const other = (await runStep('authentication.test', { authData: auth(sandbox.keys.budget, { plan: 'pro' }) })) as Record<string, string>;
		expect(other.keyId).not.toBe(result.keyId);
		expect(JSON.stringify([result, label])).not.toContain(sandbox.keys.premium);
	});

	it('refuses a revoked key as a bad key (401, reconnect)', async () => {
		expect(zapierErrorFields(await test(auth(sandbox.keys.revoked)))).toMatchObject({
			code: 'invalid_api_key',
			status: 401,
			message: expect.stringMatching(/did not accept the API key/),
		});
	});

	it('a plan without API access (403) is named, not taken for a bad key', async () => {
		expect(zapierErrorFields(await test(auth(sandbox.keys.noApiAccess)))).toMatchObject({ code: 'no_api_access', status: 403, message: expect.stringMatching(/Pro or Premium/) });
	});

	it('refuses a base URL that is not an address, has a path, or is http:// beyond the local sandbox, before sending anything', async () => {
		const before = sandbox.journal.length;
		expect(zapierErrorFields(await test(authFor('api.example', sandbox.keys.pro))).message).toMatch(/Base URL must be the address/);
		expect(zapierErrorFields(await test(authFor(`${sandbox.url}/omni`, sandbox.keys.pro))).message).toMatch(/without a path/);
		expect(zapierErrorFields(await test(authFor('http://api.omni-video.example', sandbox.keys.pro))).message).toMatch(/must start with https:\/\//);
		expect(sandbox.journal.length).toBe(before);
	});

	it('accepts a base URL pasted with /api/v1, as the address alone', async () => {
		const result = await runStep('authentication.test', { authData: authFor(`${sandbox.url}/api/v1/`, sandbox.keys.premium) });
		expect(result).toMatchObject({ host: new URL(sandbox.url).host });
		expect(sandbox.journal.at(-1)?.path).toBe('/api/v1/jobs/job_credential_check');
	});

	it('a plain website at the Base URL is not taken for the API, whatever key is given', async () => {
		const website = await plainWebsite();
		try {
			const error = zapierErrorFields(await test(authFor(website.url, 'anything')));
			expect(error).toMatchObject({ code: 'not_omni_video', message: expect.stringMatching(/not the way the Omni Video API does/) });
			expect(error.status).toBeUndefined();
		} finally {
			await website.close();
		}
	});

	it('a refused connection is told apart from a refused key', async () => {
		const website = await plainWebsite();
		const url = website.url;
		await website.close();
		const error = zapierErrorFields(await test(authFor(url, sandbox.keys.pro)));
		expect(error).toMatchObject({ code: 'unreachable', message: expect.stringMatching(/could not be checked.*connection refused/) });
		expect(error.status).toBeUndefined();
	});

	it("a Pro key set up as Premium is named from the service's rate-limit headers", async () => {
		// X-RateLimit-* is our decision (docs/api.md): a service without them (--service spec) tells nothing.
		const decided = await startSandbox({ port: 0, service: 'default' });
		try {
			const error = zapierErrorFields(await test(authFor(decided.url, decided.keys.pro, { plan: 'premium' })));
			expect(error).toMatchObject({ code: 'plan_mismatch', message: expect.stringMatching(/reports the Pro plan's limits .* says Premium/) });
		} finally {
			await decided.close();
		}
	});
});

describe('Generate Video', () => {
	const perform = 'creates.generateVideo.operation.perform';

	it('parks the step with Zapier\'s callback URL, then resumes with the job confirmed by lookup', async () => {
		const receiver = await startReceiver();
		try {
			const parked = await runWithCallbackUrl(
				perform,
				{ authData: auth(), inputData: { prompt: 'A paper boat on a rainy street', resolution: '720P', duration: 4 } },
				receiver.url,
			);
			expect(parked.status).toBe('CALLBACK');
			const submitted = parked.results as Record<string, unknown>;
			expect(submitted).toMatchObject({ status: 'queued', mode: 'text-to-video', videoUrl: null });
			const jobId = String(submitted.jobId);
			expect(sandbox.jobs.all.get(jobId)?.body).toMatchObject({ callbackUrl: receiver.url, resolution: '720P', duration: 4 });

			const [delivery] = await receiver.waitFor(1, 15_000);
			const lookupsBefore = journalFor(`/api/v1/jobs/${jobId}`).length;
			const resumed = await runStep('creates.generateVideo.operation.performResume', {
				authData: auth(),
				inputData: { prompt: 'A paper boat on a rainy street' },
				outputData: submitted,
				cleanedRequest: JSON.parse(delivery.body),
			});
			expect(resumed).toMatchObject({ id: jobId, jobId, status: 'done', mode: 'text-to-video', creditsUsed: expect.any(Number) });
			expect(String((resumed as { videoUrl: string }).videoUrl)).toMatch(/output\.mp4$/);
			// A callback job costs the create and one confirming lookup.
			expect(journalFor(`/api/v1/jobs/${jobId}`).length - lookupsBefore).toBe(1);
		} finally {
			await receiver.close();
		}
	});

	it('a forged callback cannot change the result: the step reads the job itself', async () => {
		const receiver = await startReceiver();
		try {
			const parked = await runWithCallbackUrl(perform, { authData: auth(), inputData: { prompt: 'A lighthouse at night', resolution: '720P', duration: 4 } }, receiver.url);
			const submitted = parked.results as Record<string, unknown>;
			const forged = { id: submitted.jobId, status: 'done', resultUrls: ['https://attacker.invalid/fake.mp4'] };
			const resumed = (await runStep('creates.generateVideo.operation.performResume', {
				authData: auth(),
				outputData: submitted,
				cleanedRequest: forged,
			})) as { status: string; videoUrl: string };
			expect(resumed.status).toBe('done');
			expect(resumed.videoUrl.startsWith(sandbox.url)).toBe(true);
		} finally {
			await receiver.close();
		}
	}, 40_000);

	it('while loading a sample in the editor, polls within the run and never asks for a callback URL', async () => {
		const result = (await runStep('creates.generateVideo.operation.perform', {
			authData: auth(),
			inputData: { prompt: 'A red fox in the snow', resolution: '720P', duration: 4, includeVideoFile: true },
			meta: { isLoadingSample: true },
		})) as Record<string, unknown>;
		expect(result).toMatchObject({ status: 'done', mode: 'text-to-video' });
		expect(sandbox.jobs.all.get(String(result.jobId))?.body).not.toHaveProperty('callbackUrl');
		// The video as a file: a pointer Zapier resolves with the app's hydrator when a step uses it.
		expect(String(result.videoFile)).toContain('hydrators.videoFile');
		expect(String(result.videoFile)).toContain(String(result.videoUrl));
	}, 40_000);

	it('uploads an image file first, then animates it (image to video)', async () => {
		const files = await fileHost(PNG, 'image/png');
		try {
			const result = (await runStep('creates.generateVideo.operation.perform', {
				authData: auth(),
				inputData: { prompt: 'Make the product spin', imageFile: `${files.url}/hydrate/frame.png`, resolution: '720P', duration: 4 },
				meta: { isLoadingSample: true },
			})) as Record<string, unknown>;
			expect(result.mode).toBe('image-to-video');
			const body = sandbox.jobs.all.get(String(result.jobId))?.body as { imageUrl: string };
			expect(body.imageUrl).toMatch(/frame\.png$/);
			expect(files.seen).toEqual([{ method: 'GET', path: '/hydrate/frame.png', authorization: undefined }]);
		} finally {
			await files.close();
		}
	}, 40_000);

	it('refuses bad input before any request, naming the field', async () => {
		const before = sandbox.journal.length;
		await expect(
			runStep('creates.generateVideo.operation.perform', { authData: auth(), inputData: { prompt: 'x', duration: 12 } }),
		).rejects.toThrow(/[Dd]uration.*4.*10.*12/);
		await expect(
			runStep('creates.generateVideo.operation.perform', {
				authData: auth(),
				inputData: { prompt: 'x', imageUrl: 'https://example.invalid/a.png', imageFile: 'https://example.invalid/b.png' },
			}),
		).rejects.toThrow(/either its URL or its file/);
		expect(sandbox.journal.length).toBe(before);
	});

	it('a failed job is an error that names the reason and the job id', async () => {
		const error = await runStep('creates.generateVideo.operation.perform', {
			authData: auth(),
			inputData: { prompt: 'A storm [sandbox:job-fails-content-policy]', resolution: '720P', duration: 4 },
			meta: { isLoadingSample: true },
		}).catch((thrown: Error) => thrown);
		expect(error).toBeInstanceOf(Error);
		const message = JSON.parse((error as Error).message) as { message: string; code: string };
		expect(message.message).toMatch(/job job_[\w-]+ failed/);
		expect(message.code).toBe('content_policy');
	}, 40_000);

	it('402: out of credits is a user-facing error, not a retry', async () => {
		const error = (await runStep('creates.generateVideo.operation.perform', {
			authData: auth(sandbox.keys.budget),
			inputData: { prompt: 'A long 4K film', resolution: '4K', duration: 10 },
			meta: { isLoadingSample: true },
		}).catch((thrown: Error) => thrown)) as Error;
		expect(error.name).toBe('AppError');
		expect(JSON.parse(error.message)).toMatchObject({ status: 402, message: expect.stringMatching(/credit/i) });
	});

	it('403: a plan without API access is a plain error saying what to do, not a request to reconnect', async () => {
		const error = (await runStep('creates.generateVideo.operation.perform', {
			authData: auth(sandbox.keys.noApiAccess),
			inputData: { prompt: 'Anything' },
			meta: { isLoadingSample: true },
		}).catch((thrown: Error) => thrown)) as Error;
		expect(error.name).toBe('AppError');
		expect(zapierErrorFields(error)).toMatchObject({ status: 403, message: expect.stringMatching(/Pro or Premium plan/) });
	});

	it('401: a revoked key asks the user to reconnect', async () => {
		const error = (await runStep('creates.generateVideo.operation.perform', {
			authData: auth(sandbox.keys.revoked),
			inputData: { prompt: 'Anything' },
			meta: { isLoadingSample: true },
		}).catch((thrown: Error) => thrown)) as Error;
		expect(error.name).toBe('ExpiredAuthError');
	});

	it('429: becomes ThrottledError with the server\'s delay, so Zapier retries the step later', async () => {
		// A sandbox of its own: the storm refuses the key's next requests too.
		// The server's delay is Retry-After, our decision (docs/api.md): pinned to it.
		const stormy = await startSandbox({ port: 0, service: 'default' });
		try {
			const error = (await runStep('creates.generateVideo.operation.perform', {
				authData: authFor(stormy.url, stormy.keys.premium),
				inputData: { prompt: 'Busy hour [sandbox:rate-limit-storm]' },
				meta: { isLoadingSample: true },
			}).catch((thrown: Error) => thrown)) as Error;
			expect(error.name).toBe('ThrottledError');
			const { message, delay } = JSON.parse(error.message) as { message: string; delay: number };
			expect(delay).toBeGreaterThan(0);
			expect(message).toMatch(new RegExp(`in ${delay} s`));
			// Refused, not created: nothing to pay twice when Zapier retries.
			expect(stormy.journal.map((entry) => [entry.path, entry.status])).toEqual([['/api/v1/generate', 429]]);
			expect(stormy.jobs.all.size).toBe(0);
		} finally {
			await stormy.close();
		}
	});
});

describe('Upload Image', () => {
	it('reads a file field and returns a File URL usable as Image URL', async () => {
		const files = await fileHost(PNG, 'application/octet-stream');
		try {
			const result = (await runStep('creates.uploadImage.operation.perform', {
				authData: auth(),
				inputData: { file: `${files.url}/files/product.png` },
			})) as Record<string, unknown>;
			expect(result).toMatchObject({ filename: 'product.png', contentType: 'image/png', size: PNG.length });
			const fetched = await fetch(String(result.fileUrl));
			expect(Buffer.from(await fetched.arrayBuffer())).toEqual(PNG);
		} finally {
			await files.close();
		}
	});

	it('says which file could not be read', async () => {
		const files = await fileHost(PNG, 'image/png');
		try {
			await expect(
				runStep('creates.uploadImage.operation.perform', { authData: auth(), inputData: { file: `${files.url}/missing.png` } }),
			).rejects.toThrow(/could not be read \(HTTP 404\)/);
		} finally {
			await files.close();
		}
	});
});

describe('file fields', () => {
	it('a value that is not a file or URL is refused naming the field, before any request', async () => {
		const before = sandbox.journal.length;
		const error = await runStep('creates.uploadImage.operation.perform', { authData: auth(), inputData: { file: 'my holiday photo' } }).then(
			() => undefined,
			(thrown: Error) => thrown,
		);
		expect(zapierErrorFields(error)).toMatchObject({ code: 'invalid_file', message: expect.stringMatching(/^Image File must be a file .* "my holiday photo"/) });
		expect(sandbox.journal.length).toBe(before);
	});

	it('a file over the service\'s size limit is refused from its announced size, without downloading it', async () => {
		const small = await startSandbox({ port: 0, maxUploadBytes: 1024 * 1024 });
		const size = 64 * 1024 * 1024;
		const files = await streamingFileHost(size);
		try {
			const error = await runStep('creates.uploadImage.operation.perform', {
				authData: authFor(small.url, small.keys.premium),
				inputData: { file: `${files.url}/big.png` },
			}).then(
				() => undefined,
				(thrown: Error) => thrown,
			);
			expect(zapierErrorFields(error).message).toMatch(/too large/);
			expect(small.journal.map((entry) => [entry.path, entry.status])).toEqual([['/api/upload', 413]]);
			// Stopped after the first bytes (and what the network buffers), not 64 MB later.
			expect(files.sentBytes()).toBeLessThan(size / 4);
		} finally {
			await files.close();
			await small.close();
		}
	});

	it('streams a file from its URL to storage, byte for byte', async () => {
		const size = 5 * 1024 * 1024 + 123;
		const files = await streamingFileHost(size);
		try {
			const result = (await runStep('creates.uploadImage.operation.perform', { authData: auth(), inputData: { file: `${files.url}/frame.png` } })) as {
				fileUrl: string;
				size: number;
			};
			expect(result.size).toBe(size);
			const stored = Buffer.from(await (await fetch(result.fileUrl)).arrayBuffer());
			expect(stored.length).toBe(size);
			expect(stored.subarray(0, 4)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
			expect(stored.subarray(64 * 1024, 64 * 1024 + 8)).toEqual(Buffer.alloc(8));
		} finally {
			await files.close();
		}
	});

	it('the Video File hydrator says in words when the video is gone', async () => {
		const error = await runStep('hydrators.videoFile', { authData: auth(), inputData: { url: `${sandbox.url}/omni/acct/job_gone/output.mp4` } }).then(
			() => undefined,
			(thrown: Error) => thrown,
		);
		expect(zapierErrorFields(error)).toMatchObject({ code: 'video_unavailable', message: expect.stringMatching(/could not be downloaded .* Find Job/) });
	});
});

describe('answers and redirects', () => {
	const keyWith = (scenario: string) => {
		const key = `omni_test_${scenario}_${Math.random().toString(36).slice(2, 8)}`;
		sandbox.accounts.addKey({ key, account: 'acct_premium', scenarios: [scenario] });
		return key;
	};

	it('a job answer larger than 1 MiB fails with a clear error naming the job, unread', async () => {
		await expect(
			runStep('searches.findJob.operation.perform', { authData: auth(keyWith('huge-answer')), inputData: { jobId: 'job_huge' } }),
		).rejects.toThrow(/larger than expected.*job_huge|job_huge.*larger than expected/s);
	});

	it("Upload Image follows the storage host's 307 and 308 with the same bytes", async () => {
		const files = await fileHost(PNG, 'image/png');
		try {
			const result = (await runStep('creates.uploadImage.operation.perform', {
				authData: auth(keyWith('upload-redirect')),
				inputData: { file: `${files.url}/files/product.png` },
			})) as Record<string, unknown>;
			const fetched = await fetch(String(result.fileUrl));
			expect(Buffer.from(await fetched.arrayBuffer())).toEqual(PNG);
		} finally {
			await files.close();
		}
	});
});

describe('Find Job', () => {
	it('finds a job by id, and nothing for an unknown id', async () => {
		const created = (await runStep('creates.generateVideo.operation.perform', {
			authData: auth(),
			inputData: { prompt: 'A kite over the sea', resolution: '720P', duration: 4 },
			meta: { isLoadingSample: true },
		})) as { jobId: string };
		const found = (await runStep('searches.findJob.operation.perform', { authData: auth(), inputData: { jobId: ` ${created.jobId} ` } })) as unknown[];
		expect(found).toEqual([expect.objectContaining({ id: created.jobId, jobId: created.jobId, status: 'done' })]);
		expect(await runStep('searches.findJob.operation.perform', { authData: auth(), inputData: { jobId: 'job_does_not_exist' } })).toEqual([]);
	}, 40_000);
});

describe('the key goes to the API only', () => {
	const bundle = { authData: { baseUrl: 'https://api.omni.example', apiKey: 'omni_secret' } } as never;
	const headersFor = async (url: string, middlewareData = {}) =>
		(await addBearerForApi({ url, headers: { Accept: 'application/json' }, middlewareData }, {} as never, bundle)).headers;

	it('adds the bearer key to API paths under the base URL', async () => {
		expect(await headersFor('https://api.omni.example/api/v1/generate')).toEqual({ Accept: 'application/json', Authorization: 'Bearer omni_secret' });
	});

	it('never to other hosts, other paths of the API host, or requests marked plain', async () => {
		for (const url of [
			'https://uploads.omni.example/api/put?signature=x',
			'https://api.omni.example/__uploads/upl_1?signature=x',
			'https://api.omni.example/omni/acct/job_1/output.mp4',
			'https://api.omni.example.attacker.invalid/api/v1/generate',
			'https://zapier.com/engine/hydrate/1/abc/',
		]) {
			expect(await headersFor(url)).not.toHaveProperty('Authorization');
		}
		expect(await headersFor('https://api.omni.example/api/upload', { omniVideoPlain: true })).not.toHaveProperty('Authorization');
	});
});
