import { fakeClient } from '../support/coreHarness';
import { ValidationError } from '../../core/errors';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe('uploadFile', () => {
	it('gets a ticket, then PUTs the bytes with the ticket headers and no Authorization', async () => {
		const { time, api, client } = fakeClient();
		const uploaded = await time.run(client.uploadFile({ filename: 'frame.png', contentType: 'image/png', data: PNG }));
		expect(uploaded).toMatchObject({ fileUrl: 'https://storage.omni.test/files/abc.png', contentType: 'image/png', size: PNG.byteLength });
		const [ticket, put] = api.requests;
		expect(ticket).toMatchObject({ method: 'POST', viaApi: true, body: { filename: 'frame.png', contentType: 'image/png', size: 11 } });
		expect(put).toMatchObject({ method: 'PUT', viaApi: false, url: 'https://storage.omni.test/put/abc?sig=1', body: PNG });
		expect(Object.keys(put.headers).map((h) => h.toLowerCase())).not.toContain('authorization');
		expect(put.headers['Content-Type']).toBe('image/png');
	});

	it('refuses a file that is not an image before any request', async () => {
		const { time, api, client } = fakeClient();
		const error = await time.run(client.uploadFile({ filename: 'a.txt', contentType: 'text/plain', data: new Uint8Array([1]) })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ValidationError);
		expect(api.requests).toHaveLength(0);
	});

	it('reports a refused PUT', async () => {
		const { time, api, client } = fakeClient();
		api.script.push({ response: { status: 200, headers: {}, body: { uploadUrl: 'https://s/put', fileUrl: 'https://s/f' } } });
		api.script.push({ response: { status: 403, headers: {}, body: 'expired' } });
		await expect(time.run(client.uploadFile({ filename: 'f.png', contentType: 'image/png', data: PNG }))).rejects.toMatchObject({ status: 403 });
	});
});
