import { timingSafeEqual } from 'node:crypto';
import type { IRun } from 'n8n-workflow';

/**
 * n8n 2.14+'s check of a waiting execution's resume token (WaitingWebhooks.validateToken): the run
 * data carries `resumeToken` (n8n-workflow's createRunExecutionData makes one from 2.14; older
 * versions have none, and nothing is checked), `$execution.resumeUrl` carries it as `?signature=`,
 * and a resume without it is refused 401. A path after the token and a `/` is taken as the
 * webhook's path, as n8n does; a path elsewhere in the query is part of the token's value.
 */
export function resumeTokenCheck(run: IRun, requestUrl: string, baseUrl: string): { valid: boolean; webhookPath?: string } {
	// n8n-workflow 1.x's types have no resumeToken.
	const stored = (run.data as { resumeToken?: string }).resumeToken;
	if (!stored) return { valid: true };
	let token = new URL(requestUrl, baseUrl).searchParams.get('signature') ?? undefined;
	let webhookPath: string | undefined;
	if (token?.includes('/')) {
		webhookPath = token.slice(token.indexOf('/') + 1);
		token = token.slice(0, token.indexOf('/'));
	}
	if (!token || token.length !== stored.length) return { valid: false };
	return { valid: timingSafeEqual(Buffer.from(token), Buffer.from(stored)), webhookPath };
}
