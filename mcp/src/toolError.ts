import type { CallToolResult } from '@modelcontextprotocol/server';
import { OmniVideoError, ValidationError, unsaidDetails } from '../../core';

/** What an agent should do about each kind of core error, beside the error's own words. */
const NEXT: Record<string, string> = {
	validation: 'Fix the arguments named above and call again; nothing was sent.',
	auth: 'Tell the user their Omni Video API key was refused: they should check OMNI_VIDEO_API_KEY (or the bearer header) and OMNI_VIDEO_PLAN. Do not retry.',
	credits: 'Tell the user: their credits or key budget cannot cover this video. Nothing was created or charged. Do not retry until they add credits.',
	rate_limit: 'Nothing was created. Call again after the delay given above.',
	not_found: 'Check the job id: use the jobId a generate_video result gave.',
	timeout: 'Call the same tool again later; nothing is lost.',
	transport: 'The Omni Video service could not be reached. Call again in a minute; a generate_video call with the same arguments never makes a second video.',
	service: 'The Omni Video service failed. Call again in a minute; a generate_video call with the same arguments never makes a second video.',
};

/** The tool error for anything a tool throws: the error's words, the ids it concerns and what to do; never the key (core redacts it). */
export function toolError(error: unknown): CallToolResult {
	let text: string;
	if (error instanceof ValidationError) {
		const fields = error.problems.map((p) => `${p.field}: ${p.message}`);
		text = `Invalid arguments, nothing was sent. ${fields.length > 0 ? fields.join(' ') : error.message} ${NEXT.validation}`;
	} else if (error instanceof OmniVideoError && error.code === 'create_outcome_unknown') {
		text =
			`An earlier identical call sent this create and never saw the answer, so whether a video was made (and charged) is unknown; nothing was sent again. ` +
			'Ask the user to look in their Omni Video dashboard for a job made then. If there is one, call get_job with its id; if there is none and they want the video, call generate_video with newVideo: true.';
	} else if (error instanceof OmniVideoError) {
		const { hint, jobId, requestId } = unsaidDetails(error);
		text = [error.message, hint, jobId && `(job ${jobId})`, requestId && `(request ${requestId})`, NEXT[error.kind]].filter(Boolean).join(' ');
	} else {
		text = error instanceof Error ? error.message : String(error);
	}
	return { content: [{ type: 'text', text }], isError: true };
}
