import type {
	IAuthenticateGeneric,
	Icon,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

export class OmniVideoApi implements ICredentialType {
	name = 'omniVideoApi';

	displayName = 'Omni Video API';

	icon: Icon = { light: 'file:../icons/omniVideo.svg', dark: 'file:../icons/omniVideo.dark.svg' };

	documentationUrl = 'https://github.com/omni-video/n8n-nodes-omni-video#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			description: 'An access key from your Omni Video dashboard. It is sent as a bearer token.',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'https://api.your-omni-video-host.com',
			description:
				'The address of the Omni Video API, from your dashboard, without /api/v1. For local testing with the Omni Video sandbox use http://127.0.0.1:4010.',
		},
		{
			displayName: 'Plan',
			name: 'plan',
			type: 'options',
			default: 'pro',
			description:
				'Your plan decides how many requests and jobs the node may run at once; it keeps your workflows inside these limits instead of failing with rate-limit errors',
			options: [
				{ name: 'Pro (30/min, 200/hour, 5 Jobs at Once)', value: 'pro' },
				{ name: 'Premium (60/min, 500/hour, 10 Jobs at Once)', value: 'premium' },
				{ name: 'Custom Limits', value: 'custom' },
			],
		},
		{
			displayName: 'Requests per Minute',
			name: 'requestsPerMinute',
			type: 'number',
			default: 30,
			typeOptions: { minValue: 1 },
			displayOptions: { show: { plan: ['custom'] } },
		},
		{
			displayName: 'Requests per Hour',
			name: 'requestsPerHour',
			type: 'number',
			default: 200,
			typeOptions: { minValue: 1 },
			displayOptions: { show: { plan: ['custom'] } },
		},
		{
			displayName: 'Concurrent Jobs',
			name: 'concurrentJobs',
			type: 'number',
			default: 5,
			typeOptions: { minValue: 1 },
			displayOptions: { show: { plan: ['custom'] } },
		},
		{
			displayName: 'Webhook Signing Secret',
			name: 'webhookSecret',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			placeholder: 'whsec_…',
			description:
				'Optional: when set, callbacks must carry a valid signature made with this secret. When empty, each callback is confirmed by looking the job up with your key.',
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiKey}}',
			},
		},
	};

	// The API has no "who am I" call: looking up a reserved job id answers 404 to a good key and
	// 401 to a bad one, so the test reads the error code instead of the status.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '/api/v1/jobs/job_credential_check',
			method: 'GET',
			ignoreHttpStatusErrors: true,
		},
		rules: [
			{
				type: 'responseSuccessBody',
				properties: {
					key: 'error.code',
					value: 'unauthorized',
					message: 'The API key was refused (401). Check it in your Omni Video dashboard; it may have been revoked.',
				},
			},
			{
				type: 'responseSuccessBody',
				properties: {
					key: 'error.code',
					value: 'forbidden',
					message: 'This key’s plan has no API access (403). API access needs the Pro or Premium plan.',
				},
			},
		],
	};
}
