import { z } from 'zod';
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { ValidationError } from '../../../core';
import type { ToolContext } from '../context';
import type { ToolCall } from '../toolCall';
import { runTool } from '../toolRun';
import { localImage, remoteImage } from '../imageSource';

const outputShape = {
	fileUrl: z.string().describe('Pass this as imageUrl to generate_video. It expires about an hour after the upload.'),
	contentType: z.string(),
	size: z.number().describe('Bytes uploaded.'),
	filename: z.string(),
	expiresAt: z.string().optional(),
	nextStep: z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()), afterSeconds: z.number() }),
	message: z.string(),
};

export function registerUploadImage(server: McpServer, context: ToolContext): void {
	const local = context.settings.transport === 'stdio';
	server.registerTool(
		'upload_image',
		{
			title: 'Upload an image',
			description:
				'Uploads a JPEG, PNG or WebP image to Omni Video and returns its fileUrl, to pass as imageUrl to generate_video (image to video). Costs no credits. ' +
				(local
					? `Give either path (a local file inside the folders the user allowed${context.settings.allowedDirs.length > 0 ? `: ${context.settings.allowedDirs.join(', ')}` : '; none is allowed yet'}) or url (https).`
					: 'Give url, a public https address of the image (this server runs elsewhere and cannot read your files).'),
			inputSchema: z.object({
				...(local ? { path: z.string().optional().describe('Absolute path of a local image inside an allowed folder.') } : {}),
				url: z.string().optional().describe('A public https:// address of the image.'),
			}),
			outputSchema: z.object(outputShape),
			annotations: { title: 'Upload an image', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
		},
		(args, ctx) => runTool(context, ctx, 'upload_image', (call) => upload(context, args as { path?: string; url?: string }, call)),
	);
}

async function upload(context: ToolContext, args: { path?: string; url?: string }, call: ToolCall): Promise<CallToolResult> {
	const path = args.path?.trim() || undefined;
	const url = args.url?.trim() || undefined;
	if ((path === undefined) === (url === undefined)) {
		const message = context.settings.transport === 'stdio' ? 'Give either path or url, not both and not neither.' : 'url is required: a public https:// address of the image.';
		throw new ValidationError(message, [{ field: path ? 'url' : 'path', value: undefined, message }]);
	}
	const connection = context.connect(call);
	const image = path ? await localImage(path, context.settings.allowedDirs) : await remoteImage(url as string, connection.allowInsecureLoopbackCallback, call.signal);
	const uploaded = await connection.client.uploadFile(image, { kind: 'image', signal: call.signal });
	const output = {
		fileUrl: uploaded.fileUrl,
		contentType: uploaded.contentType,
		size: uploaded.size,
		filename: uploaded.filename,
		...(uploaded.expiresAt ? { expiresAt: uploaded.expiresAt } : {}),
		nextStep: { tool: 'generate_video', arguments: { imageUrl: uploaded.fileUrl }, afterSeconds: 0 },
		message: `Uploaded ${uploaded.filename} (${uploaded.size} bytes). Call generate_video with imageUrl "${uploaded.fileUrl}" and a prompt within the hour.`,
	};
	return { content: [{ type: 'text', text: `${output.message}\n${JSON.stringify(output)}` }], structuredContent: output };
}
