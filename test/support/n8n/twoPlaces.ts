import { startSandbox, type Sandbox, type SandboxOptions } from '../../../sandbox';
import { N8nTestInstance } from './instance';
import { spedUpPlan } from './workflows';

/** Virtual time runs this much faster in the sandbox; the node's plan and estimates follow it. */
export const TWO_PLACES_SPEED = 40;
/** A plan of two jobs at once: a batch of a few rows is already larger than its places. */
export const TWO_AT_ONCE = { requestsPerMinute: 30, requestsPerHour: 200, concurrentJobs: 2 };

/**
 * A sandbox whose only key has two places, and n8n's engine with the node's credential on it
 * (signed callbacks): Wait for Callback batches larger than the plan runs at once.
 */
export async function startTwoPlaces(renderTimes?: SandboxOptions['renderTimes']): Promise<{ sandbox: Sandbox; n8n: N8nTestInstance }> {
	const sandbox = await startSandbox({
		port: 0,
		speed: TWO_PLACES_SPEED,
		insecureCallbacks: true,
		...(renderTimes ? { renderTimes } : {}),
		accounts: [{ id: 'acct_two', plan: TWO_AT_ONCE, balance: 100_000 }],
		keys: [{ key: 'omni_test_two', account: 'acct_two' }],
	});
	const n8n = await N8nTestInstance.start({
		omniVideoApi: { apiKey: 'omni_test_two', baseUrl: sandbox.url, ...spedUpPlan(TWO_AT_ONCE, TWO_PLACES_SPEED), webhookSecret: sandbox.webhookSecret },
	});
	return { sandbox, n8n };
}
