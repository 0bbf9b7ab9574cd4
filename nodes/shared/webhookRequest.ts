import type { ICredentialDataDecryptedObject, IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';
import type { CallbackRequest } from '../../core';

/**
 * The callback as core needs it. Signatures are computed over the exact bytes sent, which n8n
 * keeps as `rawBody`; the parsed body re-serialised is only a fallback and fails a signature check.
 */
export function callbackRequestOf(context: IWebhookFunctions, credentials: ICredentialDataDecryptedObject): CallbackRequest {
	const request = context.getRequestObject() as { rawBody?: Buffer | string };
	const rawBody =
		request.rawBody === undefined
			? JSON.stringify(context.getBodyData())
			: typeof request.rawBody === 'string'
				? request.rawBody
				: request.rawBody.toString('utf8');
	const secret = String(credentials.webhookSecret ?? '').trim();
	return { headers: context.getHeaderData(), rawBody, secret: secret || undefined };
}

/** Answers the caller now (the service waits at most 15 s) and starts nothing. */
export function respond(
	context: IWebhookFunctions,
	status: number,
	body: IDataObject,
	headers: Record<string, string> = {},
): IWebhookResponseData {
	const response = context.getResponseObject();
	for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
	response.status(status).json(body);
	return { noWebhookResponse: true };
}

/** Answers a callback that was not accepted; a 503 asks the service to deliver again later. */
export function respondRefused(
	context: IWebhookFunctions,
	outcome: { status: number; reason: string; jobId?: string; retryAfterSeconds?: number },
): IWebhookResponseData {
	const headers: Record<string, string> =
		outcome.retryAfterSeconds === undefined ? {} : { 'retry-after': String(outcome.retryAfterSeconds) };
	return respond(context, outcome.status, { error: outcome.reason, jobId: outcome.jobId }, headers);
}

/**
 * Omni Video has no webhook registry: a callback URL is given per job. Node types with webhooks
 * must still declare these lifecycle methods, so they report the webhook as always in place.
 */
export const perJobWebhookMethods = {
	default: {
		async checkExists(): Promise<boolean> {
			return true;
		},
		async create(): Promise<boolean> {
			return true;
		},
		async delete(): Promise<boolean> {
			return true;
		},
	},
};
