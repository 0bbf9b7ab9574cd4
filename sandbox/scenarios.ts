/**
 * Deterministic faults, chosen per key (config), per request (`X-Sandbox-Scenario: a,b`) or by a
 * marker in the prompt (`[sandbox:a]`). Each names one thing the real service may do to a client.
 */
export const SCENARIOS = {
	'job-fails-content-policy': 'The job is accepted, then fails with errorCode content_policy.',
	'job-fails-internal': 'The job is accepted, then fails with errorCode internal.',
	'job-fails-input-fetch': 'The job is accepted, then fails with errorCode input_fetch_failed.',
	'job-fails-timeout': 'The job is accepted, renders for an hour (far past the usual 30–90 s), then fails with errorCode timeout.',
	'error-500-before-accept': 'POST /generate answers 500 internal; no job is created, nothing is charged.',
	'error-500-after-create': 'POST /generate creates the job, then answers 500 anyway (a blind retry would pay twice).',
	'timeout-after-accept': 'POST /generate creates the job, holds the answer (holdMs), then cuts the connection.',
	'reset-after-accept': 'POST /generate creates the job, then resets the connection without answering.',
	'rate-limit-storm': 'This request and the next stormLength-1 on the key get 429 rate_limited with Retry-After.',
	'slow-response': 'The answer is delayed by slowMs real milliseconds.',
	'malformed-json': 'The answer has the right status but a body that is not valid JSON (a create still creates the job).',
	'service-unavailable': 'Any API request answers 503 unavailable.',
	'callback-duplicate': 'Each callback of the job is delivered twice, with the same webhook-id.',
	'callback-out-of-order': "The job's callback is held back 2 virtual minutes, so later jobs' callbacks arrive first.",
	'large-output': "The job's MP4 is served in large-file mode (largeFileBytes), for streaming tests.",
	'huge-answer': 'The answer is a valid JSON object of hugeAnswerBytes (padding in one field), streamed, for response-size limits.',
	'echo-key': "Any API request answers 403 quoting the caller's key, in the encoding named by X-Sandbox-Echo (default url), in the message and a header.",
	'upload-redirect': "The upload ticket's PUT answers 307, then 308 at the new address, and stores the bytes at the third.",
	'upload-redirect-loop': "The upload ticket's PUT answers 307 to itself, every time.",
} as const;

export type ScenarioName = keyof typeof SCENARIOS;

export function isScenario(name: string): name is ScenarioName {
	return Object.prototype.hasOwnProperty.call(SCENARIOS, name);
}

const PROMPT_MARKER = /\[sandbox:([a-z0-9-]+)\]/g;

/** Every scenario selected for one request, from the three sources, unknown names dropped. */
export function selectScenarios(sources: { key?: string[]; header?: string; prompt?: unknown }): Set<ScenarioName> {
	const names: string[] = [...(sources.key ?? [])];
	if (sources.header) names.push(...sources.header.split(',').map((s) => s.trim()));
	if (typeof sources.prompt === 'string') {
		for (const match of sources.prompt.matchAll(PROMPT_MARKER)) names.push(match[1]);
	}
	return new Set(names.filter(isScenario));
}
