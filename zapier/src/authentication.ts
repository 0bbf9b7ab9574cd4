/* eslint-disable @n8n/community-nodes/no-restricted-imports -- the Zapier app: n8n's rules for community nodes do not apply to it */
import type { Bundle, ZObject } from 'zapier-platform-core';
import { normaliseBaseUrl } from '../../core';
import { omniVideoClient } from './host';

/** One cheap request that a good key answers with 404 and a bad key with 401 (contract, "Keys"). */
async function test(z: ZObject, bundle: Bundle): Promise<{ plan: string; host: string }> {
	const baseUrl = normaliseBaseUrl(bundle.authData.baseUrl);
	if (!/^https?:\/\/[^/]+/.test(baseUrl)) {
		throw new z.errors.Error('Base URL must be the address of your Omni Video API, such as https://api.your-omni-video-host.com.', 'invalid_base_url');
	}
	const result = await omniVideoClient(z, bundle).client.testCredentials();
	if (!result.ok) throw new z.errors.Error(`Omni Video refused this key: ${result.message}`, 'invalid_api_key', 401);
	return { plan: String(bundle.authData.plan ?? 'pro'), host: new URL(baseUrl).host };
}

const PLAN_LABELS: Record<string, string> = { pro: 'Pro', premium: 'Premium' };

export default {
	type: 'custom' as const,
	test,
	fields: [
		{
			key: 'apiKey',
			label: 'API Key',
			type: 'password' as const,
			required: true,
			helpText: 'Your Omni Video API key, from the API Keys page of your Omni Video dashboard. It is sent only to the Base URL below.',
		},
		{
			key: 'baseUrl',
			label: 'Base URL',
			type: 'string' as const,
			required: true,
			helpText:
				'The address of the Omni Video API your key belongs to, without a path, such as `https://api.your-omni-video-host.com`. For the local sandbox, the URL it prints at start.',
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
			helpText: 'Your Omni Video plan: steps pace their requests to stay inside its limits.',
		},
		{
			key: 'webhookSecret',
			label: 'Webhook Signing Secret',
			type: 'password' as const,
			required: false,
			helpText:
				'Optional. The `whsec_…` secret from your Omni Video dashboard. With it, the Job Completed trigger accepts only callbacks signed by Omni Video; without it, each callback is confirmed by looking the job up (one extra request).',
		},
	],
	connectionLabel: async (_z: ZObject, bundle: Bundle) =>
		`${PLAN_LABELS[String(bundle.inputData.plan)] ?? 'Pro'} · ${String(bundle.inputData.host ?? '')}`,
};
