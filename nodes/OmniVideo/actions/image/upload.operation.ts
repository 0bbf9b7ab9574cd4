import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';
import { forEachItem } from '../../../shared/forEachItem';
import type { OmniVideoClient, UploadedFile } from '../../../../core';
import { omniVideoClient } from '../../../shared/n8nHost';

const properties: INodeProperties[] = [
	{
		displayName: 'Input Binary Field',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		required: true,
		hint: 'The name of the input field holding the image (JPEG, PNG or WebP)',
		description: 'The file is sent to Omni Video storage; the returned File URL can be used as Image URL in Generate Video',
	},
];

export const description = updateDisplayOptions({ show: { resource: ['image'], operation: ['upload'] } }, properties);

/** Uploads the item's binary image and returns its file URL. */
export async function uploadFromBinary(
	this: IExecuteFunctions,
	client: OmniVideoClient,
	itemIndex: number,
	field: string,
): Promise<UploadedFile> {
	const binary = this.helpers.assertBinaryData(itemIndex, field);
	const data = await this.helpers.getBinaryDataBuffer(itemIndex, field);
	return client.uploadFile(
		{ filename: binary.fileName ?? '', contentType: binary.mimeType ?? '', data: new Uint8Array(data) },
		{ kind: 'image', signal: this.getExecutionCancelSignal() },
	);
}

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await forEachItem(this, uploadItem);
}

async function uploadItem(this: IExecuteFunctions, itemIndex: number): Promise<INodeExecutionData[]> {
	const { client } = await omniVideoClient(this);
	const field = this.getNodeParameter('binaryPropertyName', itemIndex) as string;
	const uploaded = await uploadFromBinary.call(this, client, itemIndex, field);
	return [{ json: { ...uploaded }, pairedItem: { item: itemIndex } }];
}
