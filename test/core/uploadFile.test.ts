import { closeCoreSandboxes, coreSandbox } from '../support/coreHarness';
import { ValidationError } from '../../core/errors/errors';
import { CheckedHttp } from '../support/checkedHttp';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

afterEach(closeCoreSandboxes);

describe('uploadFile', () => {
	it('gets a ticket, then PUTs the bytes with the ticket headers and no Authorization', async () => {
		const { time, sandbox, sent, client } = await coreSandbox();
		const uploaded = await time.run(client.uploadFile({ filename: 'frame.png', contentType: 'image/png', data: PNG }));
		expect(uploaded).toMatchObject({ fileUrl: expect.stringMatching(new RegExp(`^${sandbox.url}/files/`)), contentType: 'image/png', size: PNG.byteLength });
		const [ticket, put] = sent.requests;
		expect(ticket).toMatchObject({ method: 'POST', viaApi: true, body: { filename: 'frame.png', contentType: 'image/png', size: 11 } });
		const { uploadUrl } = ticket.response?.body as { uploadUrl: string };
		expect(put).toMatchObject({ method: 'PUT', viaApi: false, url: uploadUrl, body: PNG, response: { status: 200 } });
		expect(Object.keys(put.headers).map((h) => h.toLowerCase())).not.toContain('authorization');
		expect(put.headers['Content-Type']).toBe('image/png');
		// The sandbox stored the bytes the client sent.
		const stored = await new CheckedHttp(sandbox.url).request('GET', uploaded.fileUrl);
		expect(stored.bytes).toEqual(Buffer.from(PNG));
	});

	it('refuses a file that is not an image before any request', async () => {
		const { time, sandbox, sent, client } = await coreSandbox();
		const error = await time.run(client.uploadFile({ filename: 'a.txt', contentType: 'text/plain', data: new Uint8Array([1]) })).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ValidationError);
		expect(sent.requests).toHaveLength(0);
		expect(sandbox.journal).toHaveLength(0);
	});

	it('reports a refused PUT', async () => {
		// The PUT reaches the service two hours late (a host suspended in between): its URL has expired.
		const { time, client } = await coreSandbox({
			wrapTransport: (transport, late) => ({
				...transport,
				plain: async (request) => {
					await late.sleep(2 * 3_600_000);
					return transport.plain(request);
				},
			}),
		});
		await expect(time.run(client.uploadFile({ filename: 'f.png', contentType: 'image/png', data: PNG }))).rejects.toMatchObject({ status: 403 });
	});
});
