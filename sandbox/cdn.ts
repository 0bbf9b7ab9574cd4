/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- dev tooling, never shipped in the n8n package */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { drained } from './httpUtil';

/** A real, playable two-second MP4 (see fixtures/make-sample.sh). */
export const SAMPLE_MP4 = readFileSync(join(__dirname, 'fixtures', 'sample.mp4'));

const CHUNK = 64 * 1024;

/**
 * The bytes of an output file of `size` bytes: the sample followed by one MP4 `free` box of
 * padding, which players skip, so a large file stays a valid MP4. Produced on demand for any
 * range, never held in memory whole.
 */
function* bytesOf(size: number, start: number, end: number): Generator<Buffer> {
	const sample = SAMPLE_MP4;
	const padding = size - sample.length;
	const freeHeader = Buffer.alloc(8);
	if (padding > 0) {
		freeHeader.writeUInt32BE(padding, 0);
		freeHeader.write('free', 4, 'ascii');
	}
	for (let offset = start; offset <= end; ) {
		if (offset < sample.length) {
			const stop = Math.min(end + 1, sample.length);
			yield sample.subarray(offset, stop);
			offset = stop;
		} else if (offset < sample.length + 8) {
			const stop = Math.min(end + 1, sample.length + 8);
			yield freeHeader.subarray(offset - sample.length, stop - sample.length);
			offset = stop;
		} else {
			const length = Math.min(CHUNK, end + 1 - offset);
			yield Buffer.alloc(length);
			offset += length;
		}
	}
}

function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'invalid' | undefined {
	if (!header) return undefined;
	const match = header.match(/^bytes=(\d*)-(\d*)$/);
	if (!match || (match[1] === '' && match[2] === '')) return 'invalid';
	let start: number;
	let end: number;
	if (match[1] === '') {
		start = Math.max(0, size - Number(match[2]));
		end = size - 1;
	} else {
		start = Number(match[1]);
		end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
	}
	return start > end || start >= size ? 'invalid' : { start, end };
}

/** Serves an output file with Content-Length, HEAD, Range (206) and 416, streaming with backpressure. */
export async function serveVideo(req: IncomingMessage, res: ServerResponse, size: number, requestId: string): Promise<void> {
	const range = parseRange(req.headers.range, size);
	const common = { 'Accept-Ranges': 'bytes', 'Content-Type': 'video/mp4', 'X-Request-Id': requestId };
	if (range === 'invalid') {
		res.writeHead(416, { ...common, 'Content-Type': 'application/json', 'Content-Range': `bytes */${size}` });
		res.end(JSON.stringify({ error: { code: 'range_not_satisfiable', message: `The file has ${size} bytes.`, requestId } }));
		return;
	}
	const { start, end } = range ?? { start: 0, end: size - 1 };
	res.writeHead(range ? 206 : 200, {
		...common,
		'Content-Length': String(end - start + 1),
		...(range ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}),
	});
	if (req.method === 'HEAD') {
		res.end();
		return;
	}
	for (const chunk of bytesOf(size, start, end)) {
		if (res.destroyed) return;
		if (!res.write(chunk)) await drained(res);
	}
	res.end();
}
