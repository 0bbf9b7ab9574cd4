import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { newId } from './httpUtil';

const EXPIRY_MS = 3_600_000;

export interface UploadTicketRecord {
	token: string;
	filename: string;
	contentType: string;
	size: number;
	expiresAt: number;
	data?: Buffer;
	/** How the PUT answers before storing (scenarios `upload-redirect`, `upload-redirect-loop`). */
	redirect?: 'chain' | 'loop';
}

/** Pre-signed, expiring upload URLs and the files PUT to them (in memory). */
export class Uploads {
	readonly tickets = new Map<string, UploadTicketRecord>();
	private readonly signingKey = randomBytes(32);

	create(filename: string, contentType: string, size: number, now: number, redirect?: 'chain' | 'loop'): UploadTicketRecord {
		const ticket: UploadTicketRecord = { token: newId('upl'), filename, contentType, size, expiresAt: now + EXPIRY_MS, redirect };
		this.tickets.set(ticket.token, ticket);
		return ticket;
	}

	signature(ticket: UploadTicketRecord): string {
		return createHmac('sha256', this.signingKey)
			.update(`${ticket.token}.${Math.floor(ticket.expiresAt / 1000)}.${ticket.contentType}`)
			.digest('base64url');
	}

	uploadPath(ticket: UploadTicketRecord): string {
		const expires = Math.floor(ticket.expiresAt / 1000);
		return `/__uploads/${ticket.token}?expires=${expires}&signature=${this.signature(ticket)}`;
	}

	filePath(ticket: UploadTicketRecord): string {
		return `/files/${ticket.token}/${encodeURIComponent(ticket.filename)}`;
	}

	/** Why a PUT is refused, or undefined when it may store its bytes. */
	checkPut(token: string, query: URLSearchParams, contentType: string | undefined, now: number): string | undefined {
		const ticket = this.tickets.get(token);
		if (!ticket) return 'unknown upload URL';
		const given = Buffer.from(query.get('signature') ?? '');
		const expected = Buffer.from(this.signature(ticket));
		if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'signature does not match';
		if (now > ticket.expiresAt) return 'the upload URL has expired';
		if ((contentType ?? '').split(';')[0].trim().toLowerCase() !== ticket.contentType) {
			return `Content-Type must be ${ticket.contentType}, as requested for the ticket`;
		}
		return undefined;
	}

	/**
	 * Where a PUT is sent on instead of storing, or undefined to store: `chain` answers 307 then
	 * 308 (hop 0 and 1), `loop` answers 307 to the same address forever.
	 */
	redirectFor(ticket: UploadTicketRecord, url: URL): { status: 307 | 308; location: string } | undefined {
		const hop = Number(url.searchParams.get('hop') ?? '0');
		if (ticket.redirect === 'loop') return { status: 307, location: url.pathname + url.search };
		if (ticket.redirect !== 'chain' || hop >= 2) return undefined;
		const next = new URL(url.toString());
		next.searchParams.set('hop', String(hop + 1));
		return { status: hop === 0 ? 307 : 308, location: next.pathname + next.search };
	}

	/** The stored file behind a fileUrl path, if it was uploaded. */
	fileAt(pathname: string): UploadTicketRecord | undefined {
		const match = pathname.match(/^\/files\/([^/]+)\/[^/]+$/);
		const ticket = match ? this.tickets.get(match[1]) : undefined;
		return ticket?.data ? ticket : undefined;
	}

	reset(): void {
		this.tickets.clear();
	}
}
