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
	// test/core/sharedKey.test.ts: 18 refused creates on spec against a bound of 16 (no X-RateLimit-*,
	// no concurrency_limited to learn from): polling across processes is issue 24 item 4's.
	{ test: "learns from the service's concurrency 429s how many places the others hold: at most 3 requests a job, every row done", branch: 's7-poll' },
	// test/n8n/retry.test.ts: s7-n8n: the node made a second job or waited without callbacks (issue 23 items 2-4)
	{ test: "Retry On Fail: the node's second try in the same execution gets the first try's jobs", branch: 's7-n8n' },
	{ test: "Reuse a Job Made From the Same Input: a new execution within the window gets the job already made", branch: 's7-n8n' },
	{ test: "after a Poll timeout, waits for the jobs still rendering instead of making new ones", branch: 's7-n8n' },
	{ test: "gets every job the failed run made, with the original and with the saved workflow: 0 new jobs", branch: 's7-n8n' },
	{ test: "makes only the failed job again when asked (Retry Failed Jobs), and nothing more without it", branch: 's7-n8n' },
	{ test: "polls for the jobs the failed run made (their callbacks go to that execution) and creates only the missing one", branch: 's7-n8n' },
	{ test: "returns each row once its job has ended, marked as made by the earlier run", branch: 's7-n8n' },
	// test/n8n/trigger.test.ts: s7-n8n: tests signed, retried callbacks (docs/api.md's decisions): pin service 'default', or confirm by lookup
	{ test: "a replayed delivery (same webhook-id) starts nothing the second time", branch: 's7-n8n' },
	{ test: "fires only for the chosen outcome", branch: 's7-n8n' },
	{ test: "refuses a forged copy of an outcome already delivered as forged (401), not as a duplicate", branch: 's7-n8n' },
	{ test: "starts the workflow for a signed callback, with the job and its video", branch: 's7-n8n' },
	{ test: "the service's own duplicate deliveries start one execution", branch: 's7-n8n' },
	// test/n8n/waitForCallback.test.ts: s7-n8n: the node made a second job or waited without callbacks (issue 23 items 2-4)
	{ test: "a failed job resumes as an item with status failed, the reason and the job id", branch: 's7-n8n' },
	{ test: "a batch of 10 (signed, secret: true) costs at most 1.1 requests a job; every callback answered at once, resumed once", branch: 's7-n8n' },
	{ test: "parks with the resume URL as callbackUrl and resumes once every job has ended, with the videos", branch: 's7-n8n' },
	{ test: "refuses a forged callback (bad signature) and stays parked; a late callback after the end gets 409", branch: 's7-n8n' },
	// test/n8n/waitForCallbackChain.test.ts: s7-n8n: the node made a second job or waited without callbacks (issue 23 items 2-4)
	{ test: "a callback delivered twice frees one place: no job is made twice and no create is sent twice", branch: 's7-n8n' },
	{ test: "a restart in the middle: rows made before it are found again by their key, none made twice", branch: 's7-n8n' },
	{ test: "a row that reads back differently (an expression on the time) is not made: its item says why", branch: 's7-n8n' },
	{ test: "callbacks spread over two webhook processes: every row made once, one resume", branch: 's7-n8n' },
	{ test: "every callback after the park: the rows are read back from the parked execution, each made once", branch: 's7-n8n' },
	{ test: "parked while other work held a place, it takes that place too once it is free", branch: 's7-n8n' },
	{ test: "parks after the plan’s places are taken, makes the rest from the callbacks: within 1.1× the plan’s limit at ≤ 1.1 requests a job", branch: 's7-n8n' },
	{ test: "with Continue On Fail, a row that cannot be made is an error item in its place; the others are made", branch: 's7-n8n' },
	// test/n8n/waitForCallbackQueue.test.ts: s7-n8n: the node made a second job or waited without callbacks (issue 23 items 2-4)
	{ test: "resumes within 5 s (virtual) of the last job ending, one lookup at most for a job whose callback was refused", branch: 's7-n8n' },
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
