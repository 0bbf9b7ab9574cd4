import type { Bundle, ZObject } from 'zapier-platform-core';
import { keyFingerprint, type CredentialCheck, type CredentialProblem, type PlanName } from '../../core';
import { omniVideoClient } from './host';
import { CONNECTION_TEST_BUDGET_MS, baseUrlProblem, connectionBaseUrl, deadlineIn } from './connection';

const PLAN_LABELS: Record<PlanName, string> = { pro: 'Pro', premium: 'Premium' };

/** Where keys are made, for the API Key field's help (the spec names no dashboard address). */
const KEY_HELP_URL = 'https://github.com/omni-video/n8n-nodes-omni-video#getting-an-api-key';

/** What the connection test returns; Zapier hands it to connectionLabel as inputData. */
interface Tested {
	plan: PlanName;
	host: string;
	/** Tells two keys on one host apart without showing either (see keyFingerprint). */
	keyId: string;
}

/** Zapier asks to reconnect on these; the others are about the address or the service. */
const STATUS_OF_PROBLEM: Partial<Record<CredentialProblem, number>> = { key: 401, no_api_access: 403 };

function refused(z: ZObject, check: Extract<CredentialCheck, { ok: false }>): Error {
	const unchecked = check.problem !== 'key' && check.problem !== 'no_api_access' && check.problem !== 'not_omni_video';
	const message = unchecked ? `The key could not be checked, so the connection is not saved: ${check.message}` : check.message;
	return new z.errors.Error(message, check.problem === 'key' ? 'invalid_api_key' : check.problem, STATUS_OF_PROBLEM[check.problem]);
}

/**
 * Proves the key against the real API in one request, inside a few seconds
 * (docs/api.md#authentication): only the API's own answer counts (a web server's 404 at a wrong
 * Base URL does not), a server that cannot be reached
 * is not reported as a bad key, and a plan the service's rate-limit headers contradict is named.
 */
async function test(z: ZObject, bundle: Bundle): Promise<Tested> {
	const baseUrl = connectionBaseUrl(bundle.authData);
	const problem = baseUrlProblem(baseUrl);
	if (problem) throw new z.errors.Error(problem, 'invalid_base_url');
	const plan: PlanName = bundle.authData.plan === 'premium' ? 'premium' : 'pro';
	const check = await omniVideoClient(z, bundle).client.testCredentials({ deadlineAtMs: deadlineIn(CONNECTION_TEST_BUDGET_MS) });
	if (!check.ok) throw refused(z, check);
	if (check.servicePlan && check.servicePlan !== plan) {
		const actual = PLAN_LABELS[check.servicePlan];
		throw new z.errors.Error(
			`The key works, but Omni Video reports the ${actual} plan's limits for it while this connection says ${PLAN_LABELS[plan]}. ` +
				`Choose ${actual} under Plan, so that steps pace their requests to the plan the key really has.`,
			'plan_mismatch',
		);
	}
	const apiKey = String(bundle.authData.apiKey ?? '');
	return { plan, host: new URL(baseUrl).host, keyId: keyFingerprint(apiKey, baseUrl).slice(0, 6) };
}

export default {
	type: 'custom' as const,
	test,
	fields: [
		{
			key: 'apiKey',
			label: 'API Key',
			type: 'password' as const,
			required: true,
			helpText: `Your Omni Video API key, made on the API Keys page of your Omni Video dashboard ([how to get a key](${KEY_HELP_URL})). It is sent only to the Base URL below.`,
		},
		{
			key: 'baseUrl',
			label: 'Base URL',
			type: 'string' as const,
			required: true,
			helpText:
				'The https:// address of the Omni Video API your key belongs to, without a path, such as `https://api.your-omni-video-host.com` (a trailing `/api/v1` is removed). For the local sandbox, the http://127.0.0.1 URL it prints at start.',
		},
		{
			key: 'plan',
			label: 'Plan',
			type: 'string' as const,
			required: true,
			default: 'pro',
			choices: [
				{ value: 'pro', label: 'Pro (30 requests/min, 200/hour, 5 jobs at once)', sample: 'pro' },
				{ value: 'premium', label: 'Premium (60 requests/min, 500/hour, 10 jobs at once)', sample: 'premium' },
			],
			helpText: 'Your Omni Video plan: steps pace their requests to stay inside its limits. The connection test tells you when the service reports another plan for the key.',
		},
		{
			key: 'webhookSecret',
			label: 'Webhook Signing Secret',
			type: 'password' as const,
			required: false,
			helpText:
				'Optional `whsec_…` secret from your Omni Video dashboard: with it, Job Completed accepts only callbacks signed by Omni Video. Without it, each callback is confirmed by looking the job up (one extra request).',
		},
	],
	connectionLabel: async (_z: ZObject, bundle: Bundle) => {
		const tested = bundle.inputData as Partial<Tested>;
		const plan = PLAN_LABELS[tested.plan as PlanName] ?? 'Pro';
		return `${plan} · ${String(tested.host ?? '')} · key ${String(tested.keyId ?? '')}`;
	},
};
