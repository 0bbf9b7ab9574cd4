import { describeErrors, openApi, validatorFor } from '../../sandbox/openapi';

export interface ObservedResponse {
	method: string;
	/** The real path, e.g. /api/v1/jobs/job_123 (query ignored). */
	path: string;
	status: number;
	headers: Record<string, string>;
	/** Parsed JSON, or undefined for binary and empty bodies. */
	body: unknown;
}

function templateFor(path: string): string | undefined {
	const { document } = openApi();
	const pathname = path.split('?')[0];
	return Object.keys(document.paths).find((template) => {
		const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`);
		return pattern.test(pathname);
	});
}

/**
 * Checks one response against the OpenAPI document: the path and method exist, the status is
 * declared, the JSON body matches its schema, and the declared headers that every response of
 * the API carries are present. Returns the problems (empty when it conforms).
 */
export function openApiProblems(response: ObservedResponse, expected: { retryAfter: boolean } = { retryAfter: true }): string[] {
	const { document } = openApi();
	const template = templateFor(response.path);
	if (!template) return [`${response.path} is not in the document`];
	const method = response.method.toLowerCase() === 'head' ? 'get' : response.method.toLowerCase();
	const operation = document.paths[template][method];
	if (!operation) return [`${response.method} ${template} is not in the document`];
	const status = String(response.status);
	const declared = operation.responses[status] as { $ref?: string; content?: Record<string, { schema?: unknown }> } | undefined;
	if (!declared) return [`${response.method} ${template} does not declare status ${status}`];
	const problems: string[] = [];
	if (!/^req_/.test(response.headers['x-request-id'] ?? '')) problems.push('X-Request-Id header missing');
	const resolved = declared.$ref
		? (document.components.responses[declared.$ref.split('/').pop() as string] as typeof declared)
		: declared;
	const schemaRef = resolved.content?.['application/json']?.schema as { $ref?: string } | undefined;
	if (schemaRef?.$ref && response.method.toLowerCase() !== 'head') {
		const validate = validatorFor(schemaRef.$ref);
		if (!validate(response.body)) {
			problems.push(`body ${JSON.stringify(response.body)} does not match ${schemaRef.$ref}: ${describeErrors(validate.errors)}`);
		}
	}
	// Decided (docs/api.md), unless the sandbox's service profile answers without it.
	if (expected.retryAfter && response.status === 429 && !/^\d+$/.test(response.headers['retry-after'] ?? '')) problems.push('429 without Retry-After');
	return problems;
}

/** Jest assertion: the response conforms to the document. */
export function expectConforms(response: ObservedResponse, expected?: { retryAfter: boolean }): void {
	const problems = openApiProblems(response, expected);
	if (problems.length > 0) {
		throw new Error(`${response.method} ${response.path} → ${response.status} does not conform to the OpenAPI document:\n- ${problems.join('\n- ')}`);
	}
}
