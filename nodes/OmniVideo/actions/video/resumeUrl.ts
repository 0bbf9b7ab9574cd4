import type { IExecuteFunctions } from 'n8n-workflow';

/**
 * The restart webhook's path under the resume URL: a Wait node (path '') parked later cannot take
 * our callbacks, nor we its.
 */
export const RESUME_PATH = 'omni-video';

/**
 * This execution's resume URL: `<base>/webhook-waiting/<execution id>`, and from n8n 2.14 with
 * `?signature=<token>`, a token made once per run that n8n checks on every resume (401 without it;
 * docs/n8n-internals.md). Read, never rebuilt: only n8n knows the token.
 */
export function executionResumeUrl(context: IExecuteFunctions): string {
	return String(context.evaluateExpression('{{ $execution.resumeUrl }}', 0));
}

/**
 * The callback URL a row's job is made with: our path appended to the resume URL's path, every
 * query parameter n8n put there kept (its token), and the row added. Appending to the whole string
 * put the path after the token, where n8n 2.14+ reads it as part of the token's value and answers
 * 404 to every callback.
 */
export function callbackUrlOf(resumeUrl: string, row: number): string {
	const url = new URL(resumeUrl);
	url.pathname = `${url.pathname.replace(/\/+$/, '')}/${RESUME_PATH}`;
	url.searchParams.set('row', String(row));
	return url.toString();
}

/**
 * The resume URL with another execution's id as its last path segment (a retry's jobs were made
 * with the execution it retries), its query kept as n8n gave it.
 */
export function resumeUrlOfExecution(resumeUrl: string, executionId: string): string {
	const url = new URL(resumeUrl);
	url.pathname = url.pathname.replace(/[^/]+\/*$/, encodeURIComponent(executionId));
	return url.toString();
}
