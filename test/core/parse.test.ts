import { TransportError } from '../../core/errors/errors';
import { normaliseStatus } from '../../core/answers/jobStatus';
import { parseErrorBody } from '../../core/answers/parseErrorBody';
import { parseJob } from '../../core/answers/parseJob';
import { parseUploadTicket } from '../../core/answers/parseUploadTicket';
import { parseTimestamp } from '../../core/answers/timestamp';

describe('tolerant parsing', () => {
	it.each([
		['done', 'done'],
		['succeeded', 'done'],
		['COMPLETED', 'done'],
		['failed', 'failed'],
		['error', 'failed'],
		['canceled', 'failed'],
		['cancelled', 'failed'],
		['queued', 'queued'],
		['processing', 'running'],
		['pending', 'running'],
		['throttled', 'running'],
		['in_progress', 'running'],
		['something-new', 'running'],
		[undefined, 'running'],
		[42, 'running'],
	])('reads status %j as %s', (raw, expected) => {
		expect(normaliseStatus(raw)).toBe(expected);
	});

	it('reads the contract job record', () => {
		const job = parseJob({
			id: 'job_1',
			status: 'done',
			model: 'omni-video',
			progress: 100,
			resultUrls: ['https://cdn.test/omni/u/job_1/output.mp4'],
			creditsQueued: 80,
			creditsUsed: 80,
			createdAt: '2026-05-01T12:00:00Z',
			completedAt: '2026-05-01T12:02:41Z',
		});
		expect(job).toEqual({
			id: 'job_1',
			status: 'done',
			rawStatus: 'done',
			model: 'omni-video',
			progress: 100,
			resultUrls: ['https://cdn.test/omni/u/job_1/output.mp4'],
			creditsQueued: 80,
			creditsUsed: 80,
			createdAt: '2026-05-01T12:00:00.000Z',
			completedAt: '2026-05-01T12:02:41.000Z',
		});
	});

	it('reads snake_case aliases, a single result URL and a wrapped job', () => {
		const job = parseJob({
			data: { id: 'job_2', status: 'succeeded', result_url: 'https://cdn/x.mp4', credits_used: '40', created_at: 1781080778, completed_at: 1781080794151 },
		});
		expect(job).toMatchObject({
			id: 'job_2',
			status: 'done',
			resultUrls: ['https://cdn/x.mp4'],
			creditsUsed: 40,
			createdAt: new Date(1781080778000).toISOString(),
			completedAt: new Date(1781080794151).toISOString(),
		});
		expect(parseJob({ job: { id: 'job_3', status: 'queued' } }).id).toBe('job_3');
	});

	it('reads failure reasons given as text or as an object', () => {
		expect(parseJob({ id: 'j', status: 'failed', error: 'Prompt rejected by content policy', errorCode: 'content_policy' })).toMatchObject({
			status: 'failed',
			error: 'Prompt rejected by content policy',
			errorCode: 'content_policy',
		});
		expect(parseJob({ id: 'j', status: 'error', error: { message: 'Render crashed', code: 'internal' } })).toMatchObject({
			status: 'failed',
			error: 'Render crashed',
			errorCode: 'internal',
		});
	});

	it('clamps progress and ignores unknown fields', () => {
		expect(parseJob({ id: 'j', status: 'processing', progress: 140, surprise: { x: 1 } })).toMatchObject({ progress: 100, status: 'running' });
	});

	it('uses the id asked for when the body has none', () => {
		expect(parseJob({ status: 'processing' }, 'job_asked').id).toBe('job_asked');
	});

	it.each([undefined, null, 'oops', [], 42, { status: 'done' }])('refuses %j as a job record', (body) => {
		expect(() => parseJob(body)).toThrow(TransportError);
	});

	it.each([
		['2026-05-01T12:00:00Z', '2026-05-01T12:00:00.000Z'],
		['2026-05-01T14:00:00+02:00', '2026-05-01T12:00:00.000Z'],
		[1777636800, '2026-05-01T12:00:00.000Z'],
		[1777636800000, '2026-05-01T12:00:00.000Z'],
		['1777636800', '2026-05-01T12:00:00.000Z'],
		['yesterday', undefined],
		[undefined, undefined],
		[{}, undefined],
	])('reads timestamp %j', (value, expected) => {
		expect(parseTimestamp(value)).toBe(expected);
	});

	it('reads upload tickets in either spelling, defaulting the method to PUT', () => {
		expect(
			parseUploadTicket({
				uploadUrl: 'https://s/put',
				fileUrl: 'https://s/f.png',
				method: 'put',
				headers: { 'Content-Type': 'image/png', bad: 1 },
				expiresAt: '2026-05-01T13:00:00Z',
			}),
		).toEqual({
			uploadUrl: 'https://s/put',
			fileUrl: 'https://s/f.png',
			method: 'PUT',
			headers: { 'Content-Type': 'image/png' },
			expiresAt: '2026-05-01T13:00:00.000Z',
		});
		expect(parseUploadTicket({ upload_url: 'https://s/u', file_url: 'https://s/f' })).toMatchObject({ method: 'PUT', headers: {} });
		expect(parseUploadTicket({ url: 'https://s/u', publicUrl: 'https://s/p' }).fileUrl).toBe('https://s/p');
		expect(parseUploadTicket({ url: 'https://s/u', public_url: 'https://s/p2' }).fileUrl).toBe('https://s/p2');
		expect(() => parseUploadTicket({ uploadUrl: 'https://s/u' })).toThrow(TransportError);
	});

	it.each([
		[{ error: { code: 'invalid_duration', message: 'Duration must be 4-10', requestId: 'req_1' } }, { code: 'invalid_duration', message: 'Duration must be 4-10', requestId: 'req_1' }],
		[{ error: 'Bad key' }, { message: 'Bad key' }],
		[{ message: 'Too fast', code: 'rate_limited' }, { message: 'Too fast', code: 'rate_limited' }],
		[{ detail: 'Not found' }, { message: 'Not found' }],
		[{ title: 'Forbidden', type: 'forbidden' }, { message: 'Forbidden', code: 'forbidden' }],
		[{ code: 'internal', request_id: 'req_2' }, { code: 'internal', requestId: 'req_2' }],
		['<html><body><h1>502 Bad Gateway</h1></body></html>', { message: '502 Bad Gateway' }],
		['', {}],
		[undefined, {}],
	])('reads error body %j', (body, expected) => {
		expect(parseErrorBody(body)).toEqual(expected);
	});
});
