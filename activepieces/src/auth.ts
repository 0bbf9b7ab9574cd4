/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Activepieces piece: n8n's rules for community nodes do not apply to it */
import { PieceAuth, Property } from '@activepieces/pieces-framework';
import { PLANS, baseUrlProblem, normaliseBaseUrl, type PlanName } from '../../core';
import { omniVideoClient } from './host';

/** The connection as the piece reads it (Activepieces hands actions `{ props }`, validate the props alone). */
export interface OmniVideoConnection {
	apiKey: string;
	baseUrl: string;
	plan?: string;
	webhookSecret?: string;
}

/** A plan as the builder picks it: its name and what it allows, as core paces requests to it. */
function planOption(plan: PlanName, name: string) {
	const limits = PLANS[plan];
	return { label: `${name} (${limits.requestsPerMinute} requests a minute, ${limits.requestsPerHour} an hour, ${limits.concurrentJobs} jobs at once)`, value: plan };
}

/** The longest a connection test may take, right or wrong. */
const CONNECTION_TEST_BUDGET_MS = 5_000;

export const omniVideoAuth = PieceAuth.CustomAuth({
	displayName: 'Omni Video connection',
	description:
		'Keys are made on the API Keys page of your Omni Video dashboard (Pro or Premium plan). The test costs one request: it looks up a job id reserved for the purpose.',
	required: true,
	props: {
		apiKey: PieceAuth.SecretText({ displayName: 'API Key', required: true }),
		baseUrl: Property.ShortText({
			displayName: 'Base URL',
			description: 'The https:// address of your Omni Video API, without a path, e.g. https://api.your-omni-video-host.com. A pasted /api/v1 is removed.',
			required: true,
		}),
		plan: Property.StaticDropdown({
			displayName: 'Plan',
			description: "Your key's plan: the piece paces its requests and jobs to it.",
			required: true,
			defaultValue: 'pro',
			options: {
				options: [planOption('pro', 'Pro'), planOption('premium', 'Premium')],
			},
		}),
		webhookSecret: PieceAuth.SecretText({
			displayName: 'Webhook Signing Secret',
			description: 'Optional whsec_… secret: Job Completed then accepts only callbacks signed with it, with no lookup.',
			required: false,
		}),
	},
	validate: async ({ auth }) => {
		const connection = auth as unknown as OmniVideoConnection;
		const problem = baseUrlProblem(normaliseBaseUrl(connection.baseUrl));
		if (problem) return { valid: false, error: problem };
		const check = await omniVideoClient(connection).client.testCredentials({ deadlineAtMs: Date.now() + CONNECTION_TEST_BUDGET_MS });
		if (check.ok) {
			const wrongPlan = check.servicePlan && check.servicePlan !== (connection.plan ?? 'pro');
			if (wrongPlan) return { valid: false, error: `The service counts this key's requests as ${check.servicePlan}: choose that plan.` };
			return { valid: true };
		}
		return { valid: false, error: check.message };
	},
});
