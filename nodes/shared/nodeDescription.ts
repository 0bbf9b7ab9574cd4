import type { INodeCredentialDescription, INodeTypeDescription, IWebhookDescription } from 'n8n-workflow';
import { CREDENTIAL_TYPE } from './n8nHost';

/** What both Omni Video nodes show and need: the icon and the credential. */
export const omniVideoIcon: INodeTypeDescription['icon'] = {
	light: 'file:../../icons/omniVideo.svg',
	dark: 'file:../../icons/omniVideo.dark.svg',
};

export const omniVideoCredentials: INodeCredentialDescription[] = [{ name: CREDENTIAL_TYPE, required: true }];

/** The webhook Omni Video posts a job's outcome to, answered as soon as it is received. */
export function outcomeWebhook(options: Pick<IWebhookDescription, 'path'> & Partial<IWebhookDescription>): IWebhookDescription {
	return { name: 'default', httpMethod: 'POST', responseMode: 'onReceived', responseData: '', ...options };
}
