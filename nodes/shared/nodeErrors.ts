import type { INode, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { isOmniVideoError, unsaidDetails } from '../../core';

/**
 * What the user reads under the error: the hint (unless the message already ends with it, as
 * core's messages mostly do: n8n shows both, one under the other), and the ids support needs.
 */
function describe(error: unknown): string | undefined {
	if (!isOmniVideoError(error)) return undefined;
	const parts = [
		unsaidDetails(error).hint,
		error.jobId && `Job ID: ${error.jobId}`,
		error.requestId && `Request ID: ${error.requestId}`,
		error.idempotencyKey && `Idempotency key: ${error.idempotencyKey}`,
	].filter(Boolean);
	return parts.length ? parts.join(' · ') : undefined;
}

/**
 * core's errors as n8n's: API answers as NodeApiError (with the status), the rest as NodeOperationError.
 * Without an item index, the error is the whole run's (no item caused it).
 */
export function toNodeError(node: INode, error: unknown, itemIndex?: number): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	const message = error instanceof Error ? error.message : String(error);
	const description = describe(error);
	if (isOmniVideoError(error) && error.status !== undefined) {
		return new NodeApiError(node, error.toJSON() as JsonObject, {
			message,
			description,
			httpCode: String(error.status),
			itemIndex,
		});
	}
	return new NodeOperationError(node, message, { description, itemIndex });
}

/** The error as JSON for an error item (continue on fail): every field, never the key. */
export function errorJson(error: unknown): JsonObject {
	if (isOmniVideoError(error)) return { error: error.message, details: error.toJSON() as JsonObject };
	// n8n's errors (a whole batch's, as toNodeError made it) keep what the error view shows under the
	// message, such as the jobs that go on rendering: an error item has no other place for it.
	if ((error instanceof NodeApiError || error instanceof NodeOperationError) && error.description) {
		return { error: error.message, details: { description: error.description } };
	}
	return { error: error instanceof Error ? error.message : String(error) };
}
