import type { GenerateVideoInput, UploadFileInput } from '../../core/types';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const long = (n: number) => 'a'.repeat(n);

/** Inputs that core must refuse before sending anything: each is one mistake a workflow can make. */
export const BAD_GENERATE_INPUTS: Array<[string, unknown]> = [
	['null', null],
	['undefined', undefined],
	['a string', 'a fox'],
	['a number', 42],
	['an array', [{ prompt: 'a fox' }]],
	['an empty object', {}],
	['an empty prompt', { prompt: '' }],
	['a blank prompt', { prompt: ' \n\t ' }],
	['a numeric prompt', { prompt: 7 }],
	['an object prompt', { prompt: { text: 'a fox' } }],
	['a prompt of 2001 characters', { prompt: long(2001) }],
	['a prompt of 2001 emoji', { prompt: '🎬'.repeat(2001) }],
	['another model', { prompt: 'a fox', model: 'sora' }],
	['a numeric model', { prompt: 'a fox', model: 1 }],
	['resolution 8K', { prompt: 'a fox', resolution: '8K' }],
	['resolution 1080', { prompt: 'a fox', resolution: 1080 }],
	['resolution as object', { prompt: 'a fox', resolution: { p: 1080 } }],
	['duration 3', { prompt: 'a fox', duration: 3 }],
	['duration 11', { prompt: 'a fox', duration: 11 }],
	['duration -5', { prompt: 'a fox', duration: -5 }],
	['duration NaN', { prompt: 'a fox', duration: Number.NaN }],
	['duration Infinity', { prompt: 'a fox', duration: Number.POSITIVE_INFINITY }],
	['duration text', { prompt: 'a fox', duration: 'eight' }],
	['duration hex', { prompt: 'a fox', duration: '0x8' }],
	['duration with underscore', { prompt: 'a fox', duration: '1_0' }],
	['duration as array', { prompt: 'a fox', duration: [8] }],
	['duration true', { prompt: 'a fox', duration: true }],
	['image URL without scheme', { prompt: 'a fox', imageUrl: 'frame.png' }],
	['image URL ftp', { prompt: 'a fox', imageUrl: 'ftp://files.example.com/a.png' }],
	['image URL javascript', { prompt: 'a fox', imageUrl: 'javascript:alert(1)' }],
	['image URL data:', { prompt: 'a fox', imageUrl: 'data:image/png;base64,iVBORw0KGgo=' }],
	['image URL file:', { prompt: 'a fox', imageUrl: 'file:///etc/passwd' }],
	['image URL https: without slashes', { prompt: 'a fox', imageUrl: 'https:files.example.com/a.png' }],
	['image URL of 2 MB', { prompt: 'a fox', imageUrl: `https://files.example.com/${long(2 * 1024 * 1024)}` }],
	['image URL as number', { prompt: 'a fox', imageUrl: 12 }],
	['video URL without host', { prompt: 'a fox', videoUrl: 'https://' }],
	['video URL of 9000 characters', { prompt: 'a fox', videoUrl: `https://files.example.com/${long(9000)}` }],
	['image and video URL', { prompt: 'a fox', imageUrl: 'https://x.example/a.png', videoUrl: 'https://x.example/a.mp4' }],
	['callback http to a public host', { prompt: 'a fox', callbackUrl: 'http://hooks.example.com/x' }],
	['callback without scheme', { prompt: 'a fox', callbackUrl: 'hooks.example.com/x' }],
	['callback of 2 MB', { prompt: 'a fox', callbackUrl: `https://hooks.example.com/${long(2 * 1024 * 1024)}` }],
	['callback as object', { prompt: 'a fox', callbackUrl: { url: 'https://hooks.example.com' } }],
	['several mistakes at once', { prompt: '', resolution: '2K', duration: 99 }],
];

export const BAD_JOB_IDS: Array<[string, unknown]> = [
	['empty', ''],
	['blank', '   '],
	['with a space inside', 'job 123'],
	['with a newline', 'job_1\njob_2'],
	['with a tab', 'job\t1'],
	['null', null],
	['undefined', undefined],
	['an object', { id: 'job_1' }],
	['an array', ['job_1']],
	['NaN', Number.NaN],
	['Infinity', Number.POSITIVE_INFINITY],
	['true', true],
];

export const BAD_UPLOADS: Array<[string, unknown]> = [
	['null', null],
	['undefined', undefined],
	['a string', 'photo.png'],
	['no data', { filename: 'a.png', contentType: 'image/png' }],
	['empty data', { filename: 'a.png', contentType: 'image/png', data: new Uint8Array(0) }],
	['data as text', { filename: 'a.png', contentType: 'image/png', data: 'iVBORw0KGgo=' }],
	['data as number array', { filename: 'a.png', contentType: 'image/png', data: [0x89, 0x50] }],
	['a text file', { filename: 'a.txt', contentType: 'text/plain', data: new TextEncoder().encode('hello') }],
	['unknown bytes, no type', { filename: 'a.bin', data: new Uint8Array([1, 2, 3, 4]) }],
	['a GIF', { filename: 'a.gif', data: new TextEncoder().encode('GIF89a....') }],
	['PNG bytes declared JPEG', { filename: 'a.jpg', contentType: 'image/jpeg', data: PNG }],
	['an image declared as video/mp4', { filename: 'a.png', contentType: 'video/mp4', data: PNG }],
];

export type BadInput = GenerateVideoInput | UploadFileInput | string;
