/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { createAction, Property } from '@activepieces/pieces-framework';
import { omniVideoAuth } from '../auth';
import { connectionOf, inStepTerms, omniVideoClient } from '../host';

export const uploadImage = createAction({
	auth: omniVideoAuth,
	name: 'upload_image',
	displayName: 'Upload Image',
	description: 'Uploads a JPEG, PNG or WebP image to Omni Video storage; use its File URL as Image URL in Generate Video.',
	props: {
		image: Property.File({
			displayName: 'Image',
			description: 'A file from an earlier step, or the URL of an image (Activepieces downloads it first).',
			required: true,
		}),
		fileName: Property.ShortText({ displayName: 'File Name', description: "Optional: the name to store it under; the file's own name by default.", required: false }),
	},
	async run(ctx) {
		return inStepTerms(async () => {
			const { image, fileName } = ctx.propsValue;
			const data = new Uint8Array(image.data);
			const { client } = omniVideoClient(connectionOf(ctx.auth));
			// No declared type: core reads it from the bytes (a name or a URL may say otherwise).
			const uploaded = await client.uploadFile({ filename: fileName || image.filename, contentType: '', data });
			return { fileUrl: uploaded.fileUrl, fileName: uploaded.filename, contentType: uploaded.contentType, size: uploaded.size, expiresAt: uploaded.expiresAt };
		});
	},
});
