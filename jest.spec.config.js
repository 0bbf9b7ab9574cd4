/**
 * The money and completion suites again, on the strictest reading of the spec (the sandbox's
 * `--service spec`: Idempotency-Key ignored; callbacks unsigned, sent once, none for failed jobs;
 * no progress; no X-RateLimit-*; 429s without Retry-After that do not say which limit). `npm test`
 * runs them on docs/api.md's decisions; `npm run test:spec` runs them here. Tests that check one
 * of those decisions pin `service: 'default'` and run the same on both.
 */
const base = require('./jest.config.js');

/**
 * Tests that fail on --service spec until a fix on another branch lands: each entry is a piece of
 * the test's full name (describe blocks and title), with the branch expected to make it pass.
 * Empty this list as they land; never add a test here to hide a regression.
 */
const SPEC_AWAITING_FIXES = [
	// test/n8n/waitForCallback.test.ts: these assume signed callbacks that are redelivered; on spec they must confirm by
	// lookup, and a lost callback ends the item as 'unknown' at the bound rather than done (issue 23 item 3, still open)
	{ test: "a failed job resumes as an item with status failed, the reason and the job id", branch: 'issue 23 item 3 / issue 24' },
	{ test: "a batch of 10 (signed, secret: true) costs at most 1.1 requests a job; every callback answered at once, resumed once", branch: 'issue 23 item 3 / issue 24' },
	{ test: "parks with the resume URL as callbackUrl and resumes once every job has ended, with the videos", branch: 'issue 23 item 3 / issue 24' },
	{ test: "refuses a forged callback (bad signature) and stays parked; a late callback after the end gets 409", branch: 'issue 23 item 3 / issue 24' },
	// test/n8n/waitForCallbackChain.test.ts: the same; and rows made from callbacks are found again by resending creates (issue 24)
	{ test: "a callback delivered twice frees one place: no job is made twice and no create is sent twice", branch: 'issue 23 item 3 / issue 24' },
	{ test: "a restart in the middle: rows made before it are found again by their key, none made twice", branch: 'issue 23 item 3 / issue 24' },
	{ test: "a row that reads back differently (an expression on the time) is not made: its item says why", branch: 'issue 23 item 3 / issue 24' },
	{ test: "callbacks spread over two webhook processes: every row made once, one resume", branch: 'issue 23 item 3 / issue 24' },
	{ test: "every callback after the park: the rows are read back from the parked execution, each made once", branch: 'issue 23 item 3 / issue 24' },
	{ test: "parked while other work held a place, it takes that place too once it is free", branch: 'issue 23 item 3 / issue 24' },
	{ test: "parks after the plan’s places are taken, makes the rest from the callbacks: within 1.1× the plan’s limit at ≤ 1.1 requests a job", branch: 'issue 23 item 3 / issue 24' },
	{ test: "with Continue On Fail, a row that cannot be made is an error item in its place; the others are made", branch: 'issue 23 item 3 / issue 24' },
	// test/n8n/waitForCallbackQueue.test.ts: a refused callback is not delivered again on spec (issue 23 item 3, still open)
	{ test: "resumes within 5 s (virtual) of the last job ending, one lookup at most for a job whose callback was refused", branch: 'issue 23 item 3 / issue 24' },
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

module.exports = {
	...base,
	roots: ['<rootDir>/test', '<rootDir>/activepieces/test'],
	// Money (no second job, no second charge) and completion (every item ends with its outcome).
	testMatch: ['<rootDir>/test/core/**/*.test.ts', '<rootDir>/test/n8n/**/*.test.ts', '<rootDir>/test/zapier/**/*.test.ts', '<rootDir>/activepieces/test/**/*.test.ts'],
	setupFiles: ['<rootDir>/test/support/specService.ts'],
	...(SPEC_AWAITING_FIXES.length > 0
		? { testNamePattern: `^(?!.*(?:${SPEC_AWAITING_FIXES.map((entry) => escape(entry.test)).join('|')}))` }
		: {}),
};
