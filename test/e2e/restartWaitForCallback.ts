/**
 * Wait for Callback across an n8n restart (issues 23 and 24): a batch parks, n8n stops while its
 * jobs render and starts again, as a deploy or a crash does. On the spec's strictest reading the
 * callbacks sent while n8n was down are lost (each is delivered once, none for a failed job): the
 * node must find its jobs from its own records and by lookup, never by sending a create again.
 *
 * Figures: jobs created per restart (0 expected: a create sent again on `--service spec` is a second
 * paid video), callbacks lost while n8n was down, every item's outcome, how often the items went
 * downstream (once), the time from the last job's end to the batch's end.
 */
import { typicalRenderSeconds } from '../../sandbox/renderTimes';
import { check, createActiveWorkflow, credentialOnOwnKey, errorOf, executionWith, outputOf, postRows, seconds, type Context } from './context';
import { describeFigures, jobsEnded, jobsTagged, keyLabel, realTimeOf, requestFigures } from './scaledFigures';
import { noOp, omniVideo, webhookWorkflow } from './workflows';
import type { Execution } from './n8nServer';
import { waitUntil } from './processes';

/** Twice the Pro plan's jobs at once: the first ones end while n8n is down, the others are made after. */
const ROWS = 10;
/** n8n's WaitTracker looks every 60 s; the batch's own follow-up adds a margin: past this it is stuck. */
const PATIENCE_MS = 600_000;

/**
 * The execution once it has succeeded or failed, or its last state after `timeoutMs`; and whether
 * it was shown "crashed" meanwhile. n8n marks an execution crashed when it was running as the
 * process stopped (here: a continuation resumed by a callback while n8n was shutting down), and its
 * WaitTracker never wakes a crashed execution; a later callback still resumes it (waiting-webhooks
 * refuses only running, failed and finished ones). So "crashed" is not the end here: the check
 * waits on, and says so.
 */
async function executionEnded(context: Context, id: string, timeoutMs: number): Promise<{ execution?: Execution; crashedSeen: boolean }> {
	let execution: Execution | undefined;
	let crashedSeen: number | undefined;
	await waitUntil(`execution ${id} to end`, async () => {
		execution = await context.n8n.execution(id).catch(() => execution);
		if (execution?.status === 'crashed') crashedSeen ??= Date.now();
		// Crashed for longer than the wait tracker's minute and a callback's retries: nothing resumes it.
		if (execution?.status === 'crashed' && Date.now() - crashedSeen! > CRASHED_FOR_GOOD_MS) return true;
		return execution !== undefined && ['success', 'error'].includes(execution.status);
	}, timeoutMs, 500).catch(() => undefined);
	return { execution, crashedSeen: crashedSeen !== undefined };
}

/**
 * n8n 1.x and 2.8 resume a crashed execution on its next callback; 2.41 resumes only a waiting one
 * (ActiveExecutions: `requireStatus: 'waiting'`), so a crashed one stays so: past this, the user's
 * way on is the executions list's Retry, which gets the jobs back from the node's records.
 */
const CRASHED_FOR_GOOD_MS = 90_000;

export async function waitForCallbackAcrossRestart(context: Context, name = 'wfc-restart'): Promise<string> {
	const { sandbox } = context;
	const unsigned = sandbox.service.switches.callbackSigning === 'unsigned';
	const credential = await credentialOnOwnKey(context, name, { speed: context.speed, signed: !unsigned });
	const stamp = Date.now().toString(36);
	const tag = `${name} ${stamp} item`;
	const path = `e2e-${name}-${stamp}`;
	const workflowId = await createActiveWorkflow(
		context,
		webhookWorkflow(`e2e: ${name}`, path, [
			omniVideo('Generate Video', { resource: 'video', operation: 'generate', prompt: '={{ $json.prompt }}', resolution: '720P', duration: 4, waitMode: 'callback', options: { expectedRenderSeconds: Math.ceil(typicalRenderSeconds('720P', 4) / context.speed) } }, credential),
			noOp('After'),
		]),
	);
	await jobsEnded(sandbox);
	const from = sandbox.journal.length;
	const attemptsFrom = sandbox.callbackAttempts.length;
	await postRows(context, path, Array.from({ length: ROWS }, (_, i) => ({ prompt: `${tag} ${i + 1}` })));
	const parked = await executionWith(context, workflowId, ['waiting', 'success', 'error', 'crashed'], 300_000);
	check(parked.status === 'waiting', `the execution was not parked (status ${parked.status})`);
	const madeBeforeRestart = jobsTagged(sandbox, tag).length;
	const downFrom = Date.now();
	await context.n8n.restart(`main-after-${name}`);
	const downMs = Date.now() - downFrom;
	// This execution's own record, not the list's: right after a restart the list may show it with
	// another status for a moment.
	const ended = await executionEnded(context, parked.id, PATIENCE_MS);
	const { crashedSeen } = ended;
	let last = ended.execution;
	const retried = last?.status === 'crashed';
	if (retried) last = await context.n8n.execution((await context.n8n.retry(parked.id, false)).id);
	const finished = last && ['success', 'error'].includes(last.status) ? last : undefined;

	const figures = requestFigures(sandbox, { tag, key: keyLabel(name), from, rows: ROWS, speed: context.speed });
	const jobs = jobsTagged(sandbox, tag);
	const jobIds = new Set(jobs.map((job) => job.id));
	const attempts = sandbox.callbackAttempts.slice(attemptsFrom).filter((attempt) => jobIds.has(attempt.jobId));
	const refused = attempts.filter((attempt) => attempt.status !== 200);
	const lost = jobs.filter((job) => !attempts.some((attempt) => attempt.jobId === job.id && attempt.status === 200)).length;
	const items = finished ? outputOf(finished, 'Generate Video') : [];
	const done = items.filter((item) => item.json.status === 'done').length;
	const downstreamRuns = finished?.data?.resultData.runData.After?.length ?? 0;
	const lastEnd = jobs.length ? realTimeOf(sandbox, Math.max(...jobs.map((job) => job.endsAt))) : downFrom;
	const outcome = finished
		? `execution ${finished.id} ${finished.status}, ${done} of ${ROWS} items done, ${seconds(Date.parse(finished.stoppedAt ?? '') - lastEnd)} after the last job ended; "After" ran ${downstreamRuns} time(s)`
		: `execution ${parked.id} still ${last?.status ?? 'unknown'} ${seconds(PATIENCE_MS)} after the restart`;
	const crashed = crashedSeen
		? retried
			? ' (n8n showed it "crashed" after the restart, a continuation running as n8n stopped, and no callback resumed it: retried from the executions list, as a user would)'
			: ' (n8n showed it "crashed" after the restart: a continuation was running as n8n stopped)'
		: '';
	const evidence = `${ROWS} items, sandbox profile ${sandbox.service.profile}, ${unsigned ? 'unsigned callbacks' : 'signing secret'}: ${madeBeforeRestart} jobs made before the restart, n8n down ${seconds(downMs)}; ${outcome}${crashed}; jobs created per restart: ${figures.duplicates} (creates resent ${figures.createsResent}); ${describeFigures(figures, ROWS)}; ${attempts.length} deliveries, ${refused.length} not answered 200, ${lost} jobs whose callback never got through`;

	check(finished, `the batch did not end after the restart: ${evidence}`);
	check(finished.status === 'success', `execution ${finished.status}: ${errorOf(finished, 'Generate Video')?.message}; ${evidence}`);
	check(items.length === ROWS && done === ROWS, `items not done: ${evidence}`);
	check(figures.duplicates === 0 && figures.createsResent === 0, `jobs created again after the restart: ${evidence}`);
	check(downstreamRuns === 1, `the items went downstream ${downstreamRuns} times: ${evidence}`);
	return evidence;
}
