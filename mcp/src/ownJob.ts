import type { ToolContext } from './context';
import type { ToolCall } from './toolCall';

/** A team member asked about a job they did not make (or one that does not exist: the answer is the same). */
export class NotYoursError extends Error {
	readonly code = 'not_yours';
	constructor(jobId: string) {
		super(
			`Job ${jobId} is not one of yours: as a member of the team you can read only the jobs you made with this server. Nothing was sent. ` +
				'Use a jobId that your own generate_video call returned; to see every member\'s jobs, ask the team\'s admin (omni-video-mcp members jobs NAME).',
		);
	}
}

/**
 * The one check every tool that reads a job makes first, before its records or the service: a team
 * member (`--sign-in team`) reads only the jobs they made, since the team's key would let anyone
 * read any of them. It reads one record of ours whether the job exists or not, and answers alike,
 * so that it tells nothing of other members' jobs; no request is sent. People with their own key,
 * and clients with a bearer key, are not members: the service itself keeps other keys' jobs from them.
 */
export async function ownJob(context: Pick<ToolContext, 'accounts'>, call: Pick<ToolCall, 'signedIn'>, jobId: string): Promise<void> {
	const member = call.signedIn?.member;
	if (!member) return;
	const maker = await context.accounts.jobMaker(jobId);
	if (maker?.member !== member.name || maker.since !== (member.since ?? 0)) throw new NotYoursError(jobId);
}
