/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test tooling, never shipped: it reads the sandbox README */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_DURATION_SECONDS, MAX_PROMPT_CODE_POINTS, MIN_DURATION_SECONDS, RESOLUTIONS } from '../../core/types';
import { validateGenerateInput } from '../../core/input/validateGenerate';
import { DEFAULT_CONFIG, type SandboxConfig } from '../../sandbox';
import { keysByRole, sandboxKeys } from '../../sandbox/config';
import { openApi } from '../../sandbox/openapi';
import { ADMIN_ROUTES } from '../../sandbox/routes/admin';
import { API_ROUTES } from '../../sandbox/routes/api';
import { FILE_ROUTES } from '../../sandbox/routes/files';
import { isReply, validateGenerateBody } from '../../sandbox/validation';

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** Every `METHOD /path` of the OpenAPI document. */
function documented(): string[] {
	return Object.entries(openApi().document.paths).flatMap(([path, item]) =>
		Object.keys(item)
			.filter((method) => HTTP_METHODS.has(method))
			.map((method) => `${method.toUpperCase()} ${path}`),
	);
}

/** The document describes GET; HEAD is answered wherever GET is. */
const asDocumented = ({ method, path }: { method: string; path: string }) => `${method === 'HEAD' ? 'GET' : method} ${path}`;

describe('the sandbox route table against the OpenAPI document', () => {
	const served = [...API_ROUTES, ...FILE_ROUTES].map(asDocumented);

	it.each([...API_ROUTES, ...FILE_ROUTES].map((route) => [`${route.method} ${route.path}`, route]))('%s is in the document', (_name, route) => {
		expect(documented()).toContain(asDocumented(route));
	});

	it.each(documented())('%s has a route', (operation) => {
		expect(served).toContain(operation);
	});

	it('each family sits under the prefix the server dispatches it by', () => {
		for (const route of API_ROUTES) expect(route.path).toMatch(/^\/api\//);
		for (const route of ADMIN_ROUTES) expect(route.path).toMatch(/^\/__sandbox\//);
		for (const route of FILE_ROUTES) expect(route.path).not.toMatch(/^\/(api|__sandbox)\//);
	});

	it('no method and path is routed twice', () => {
		const all = [...API_ROUTES, ...ADMIN_ROUTES, ...FILE_ROUTES].map(({ method, path }) => `${method} ${path}`);
		expect(new Set(all).size).toBe(all.length);
	});

	it('the sandbox README lists every admin route', () => {
		const readme = readFileSync(join(__dirname, '..', '..', 'sandbox', 'README.md'), 'utf8');
		for (const { method, path } of ADMIN_ROUTES) expect(readme).toContain(`${method} ${path}`);
	});
});

describe("the sandbox's keys come from its config", () => {
	it('the default config gives the keys the sandbox README lists, by role', () => {
		expect({ ...sandboxKeys(DEFAULT_CONFIG) }).toEqual({
			pro: 'omni_test_pro',
			premium: 'omni_test_premium',
			budget: 'omni_test_budget',
			revoked: 'omni_test_revoked',
			noApiAccess: 'omni_test_free',
		});
	});

	it("a config's own keys fill the roles they fit; a role no key fits is absent, and asking the sandbox for it says so", () => {
		const config: SandboxConfig = {
			...DEFAULT_CONFIG,
			accounts: [{ id: 'acct_team', plan: 'premium', balance: 5000 }],
			keys: [
				{ key: 'omni_test_flaky', account: 'acct_team', scenarios: ['slow-response'] },
				{ key: 'omni_test_team', account: 'acct_team' },
			],
		};
		expect(keysByRole(config)).toEqual({ premium: 'omni_test_team' });
		expect(sandboxKeys(config).premium).toBe('omni_test_team');
		expect(() => sandboxKeys(config).pro).toThrow(/no pro key/);
	});
});

describe("the sandbox's limits are core's", () => {
	const fields = (extra: Record<string, unknown>) => ({ model: 'omni-video', prompt: 'A fox', ...extra });
	const coreAccepts = (input: Record<string, unknown>) => {
		try {
			validateGenerateInput(input as never);
			return true;
		} catch {
			return false;
		}
	};
	const sandboxAccepts = (input: Record<string, unknown>) => !isReply(validateGenerateBody(input, false));

	it.each([
		...[MIN_DURATION_SECONDS - 1, MIN_DURATION_SECONDS, MAX_DURATION_SECONDS, MAX_DURATION_SECONDS + 1].map((duration) => ({ duration })),
		...[MAX_PROMPT_CODE_POINTS, MAX_PROMPT_CODE_POINTS + 1].map((length) => ({ prompt: '🎬'.repeat(length) })),
		...[...RESOLUTIONS, '8K'].map((resolution) => ({ resolution })),
		{ callbackUrl: 'https://hooks.example.com/x' },
		{ callbackUrl: 'http://localhost:9/x' },
	])('core and the sandbox agree on %j', (extra) => {
		expect(sandboxAccepts(fields(extra))).toBe(coreAccepts(fields(extra)));
	});
});
