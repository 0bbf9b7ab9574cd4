import type { UploadTicket } from '../types';
import { firstString, isObject, malformed, unwrap } from './answerFields';
import { parseTimestamp } from './timestamp';

/**
 * Reads the upload ticket in any listed spelling; throws TransportError if unusable. The spec
 * does not show this answer (docs/api.md#uploads): `url` and `publicUrl` are the names other
 * pre-signed upload APIs use, and the method defaults to the PUT the spec speaks of.
 */
export function parseUploadTicket(body: unknown): UploadTicket {
	const ticket = unwrap(body);
	const uploadUrl = ticket && firstString(ticket.uploadUrl, ticket.upload_url, ticket.url);
	const fileUrl =
		ticket && firstString(ticket.fileUrl, ticket.file_url, ticket.publicUrl, ticket.public_url);
	if (!ticket || !uploadUrl || !fileUrl) throw malformed('upload ticket');
	const headers: Record<string, string> = {};
	// Only string values can be sent as headers; anything else is dropped.
	if (isObject(ticket.headers)) {
		for (const [name, value] of Object.entries(ticket.headers)) {
			if (typeof value === 'string') headers[name] = value;
		}
	}
	const result: UploadTicket = {
		uploadUrl,
		fileUrl,
		method: (firstString(ticket.method) ?? 'PUT').trim().toUpperCase(),
		headers,
	};
	const expiresAt = parseTimestamp(ticket.expiresAt ?? ticket.expires_at);
	if (expiresAt) result.expiresAt = expiresAt;
	return result;
}
