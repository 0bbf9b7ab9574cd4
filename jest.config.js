/**
 * Jest runs every suite under test/ with ts-jest against the dev tsconfig, and the n8n engine
 * tests (test/n8n) a second time on the newest n8n-core and n8n-workflow (the npm aliases
 * n8n-core-newest and n8n-workflow-newest): the pins are the oldest supported n8n's (1.123), so
 * a change in a newer n8n that the node leans on fails a test here, not users' workflows. That
 * second run is on the strictest reading of the spec (`--service spec`, see jest.spec.config.js),
 * the first on docs/api.md's decisions: each end of the range and each reading run once.
 */
const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.dev.json' }] };
const base = { testEnvironment: 'node', transform, testTimeout: 30000 };

/** Every `n8n-core` and `n8n-workflow` import, the built package's and n8n-core's own included. */
const NEWEST_N8N = {
	'^n8n-workflow$': '<rootDir>/node_modules/n8n-workflow-newest',
	'^n8n-workflow/(.*)$': '<rootDir>/node_modules/n8n-workflow-newest/$1',
	'^n8n-core$': '<rootDir>/node_modules/n8n-core-newest',
	'^n8n-core/(.*)$': '<rootDir>/node_modules/n8n-core-newest/$1',
};

const projects = [
	{
		...base,
		displayName: 'pinned',
		// The Activepieces piece's and the MCP server's tests sit beside them, where their own node_modules resolve.
		roots: ['<rootDir>/test', '<rootDir>/activepieces/test', '<rootDir>/mcp/test'],
		testMatch: ['**/*.test.ts'],
	},
	{
		...base,
		displayName: 'n8n-newest',
		roots: ['<rootDir>/test/n8n'],
		testMatch: ['**/*.test.ts'],
		moduleNameMapper: NEWEST_N8N,
		setupFiles: ['<rootDir>/test/support/specService.ts'],
	},
];

module.exports = {
	projects,
	// The engine and MCP suites mostly wait on sped-up sandboxes (test/n8n on n8n-newest: 66 s of CPU
	// in 265 s with 2 workers, against 7.5 min with Jest's default of one worker on 2 cores).
	maxWorkers: 3,
	// The n8n engine tests load the built package, the Activepieces tests the built piece: each is built first when missing or stale.
	globalSetup: '<rootDir>/test/support/globalSetup.ts',
	// Removes the run's temporary folder, which globalSetup makes.
	globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
	testTimeout: 30000,
};
