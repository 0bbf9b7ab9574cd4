import { defineCreate, type Bundle, type ZObject } from 'zapier-platform-core';
import { asZapierErrors } from '../errors';
import { omniVideoClient } from '../host';
import { uploadFileField } from '../files';
import { deadlineIn } from '../connection';

type UploadInput = {
	file: string;
	filename?: string;
};

async function perform(z: ZObject, bundle: Bundle<UploadInput>) {
	return asZapierErrors(z, async () => {
		const { client } = omniVideoClient(z, bundle);
		const uploaded = await uploadFileField(z, client, String(bundle.inputData.file ?? ''), {
			field: 'Image File',
			kind: 'image',
			fallbackName: 'image',
			filename: String(bundle.inputData.filename ?? '').trim(),
			deadlineAtMs: deadlineIn(),
		});
		return { id: uploaded.fileUrl, ...uploaded };
	});
}

export default defineCreate({
	key: 'uploadImage',
	noun: 'Image',
	display: {
		label: 'Upload Image',
		description: 'Uploads an image to Omni Video storage and returns its File URL, for the Image URL of Generate Video.',
	},
	operation: {
		perform,
		throttle: { window: 60, limit: 10, scope: ['auth' as const] },
		inputFields: [
			{
				key: 'file',
				label: 'Image File',
				type: 'file' as const,
				required: true,
				helpText: 'A JPEG, PNG or WebP image from an earlier step (or a public URL of one). The file type is read from its bytes.',
			},
			{
				key: 'filename',
				label: 'File Name',
				type: 'string' as const,
				required: false,
				helpText: 'Optional: the name to store it under, such as `product.png`. Defaults to the name in the file URL.',
			},
		],
		outputFields: [
			{ key: 'fileUrl', label: 'File URL (use as Image URL)', type: 'string' as const, primary: true },
			{ key: 'filename', label: 'File Name', type: 'string' as const },
			{ key: 'contentType', label: 'Content Type', type: 'string' as const },
			{ key: 'size', label: 'Size (bytes)', type: 'integer' as const },
		],
		sample: {
			id: 'https://uploads.omni-video.example/files/upl_51c0e2/product.png',
			fileUrl: 'https://uploads.omni-video.example/files/upl_51c0e2/product.png',
			filename: 'product.png',
			contentType: 'image/png',
			size: 48213,
		},
	},
});
