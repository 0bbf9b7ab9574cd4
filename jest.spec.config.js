/**
 * The money and completion suites again, on the strictest reading of the spec (the sandbox's
 * `--service spec`: Idempotency-Key ignored; callbacks unsigned, sent once, none for failed jobs;
 * no progress; no X-RateLimit-*; 429s without Retry-After that do not say which limit). `npm test`
 * runs them on docs/api.md's decisions; `npm run test:spec` runs core's, the Zapier app's and the
 * Activepieces piece's here. The n8n engine tests need no run of their own: npm test runs them on
 * this reading already, on the newest n8n (jest.config.js). Tests that check one of those
 * decisions pin `service: 'default'` and run the same on both.
 */
const { projects, ...base } = require('./jest.config.js');

/**
 * Tests that fail on --service spec until a fix on another branch lands: each entry is a piece of
 * the test's full name (describe blocks and title), with the branch expected to make it pass.
 * Empty this list as they land; never add a test here to hide a regression.
 */
const SPEC_AWAITING_FIXES = [
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Money (no second job, no second charge) and completion (every item ends with its outcome).
const MONEY_AND_COMPLETION = ['<rootDir>/test/core/**/*.test.ts', '<rootDir>/test/zapier/**/*.test.ts', '<rootDir>/activepieces/test/**/*.test.ts'];

/** Suites that run both readings themselves (describe.each over the service's readings): npm test ran them whole. */
const BOTH_READINGS = ['<rootDir>/activepieces/test/instance.test.ts'];

module.exports = {
	...base,
	projects: projects
		.filter((project) => project.displayName === 'pinned')
		.map((project) => ({ ...project, testMatch: MONEY_AND_COMPLETION, testPathIgnorePatterns: ['/node_modules/', ...BOTH_READINGS], setupFiles: ['<rootDir>/test/support/specService.ts'] })),
	...(SPEC_AWAITING_FIXES.length > 0
		? { testNamePattern: `^(?!.*(?:${SPEC_AWAITING_FIXES.map((entry) => escape(entry.test)).join('|')}))` }
		: {}),
};
