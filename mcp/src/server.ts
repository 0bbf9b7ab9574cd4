import { McpServer } from '@modelcontextprotocol/server';
import { registerJobView, rendersViews } from './appView';
import type { ToolContext } from './context';
import { registerGenerateVideo } from './tools/generateVideo';
import { registerGetJob } from './tools/getJob';
import { registerUploadImage } from './tools/uploadImage';
import { registerWaitForJob } from './tools/waitForJob';
import packageJson from '../package.json';

const INSTRUCTIONS =
	'Omni Video makes short videos (4-10 s, up to 4K) from a prompt, an image or footage, in 30-90 s. ' +
	'Call generate_video; if the answer is a receipt (status queued or running), call wait_for_job with its jobId until status is done, then give the user videoUrl. ' +
	'Retrying generate_video with the same arguments never pays twice; newVideo: true asks for another video deliberately. For image to video, upload_image first.';

/**
 * An MCP server over the process's shared tool context: one per stdio connection, one per HTTP
 * request (the SDK makes one for each, on either protocol era), so it holds nothing of its own.
 * `views`: the request's client renders MCP Apps views, as the HTTP server learns it from the
 * request; a stdio client's capabilities are read from its initialize.
 */
export function createServer(context: ToolContext, options: { views?: boolean } = {}): McpServer {
	const server = new McpServer({ name: packageJson.name, title: 'Omni Video', version: packageJson.version }, { instructions: INSTRUCTIONS });
	registerGenerateVideo(server, context);
	registerWaitForJob(server, context);
	registerGetJob(server, context);
	registerUploadImage(server, context);
	registerJobView(server, context, () => options.views === true || rendersViews(server.server.getClientCapabilities()));
	return server;
}
