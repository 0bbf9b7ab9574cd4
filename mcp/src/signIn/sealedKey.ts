import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A person's API key as the records keep it: AES-256-GCM under a key derived from the server's
 * secret (OMNI_VIDEO_MCP_SECRET), which is in the environment and never in the store. Whoever reads
 * the records (a folder's backup, a Redis dump) reads no key; a record altered fails to open.
 */
export class KeySeal {
	private readonly key: Buffer;

	constructor(secret: string) {
		this.key = Buffer.from(hkdfSync('sha256', secret, 'omni-video-mcp', 'sealed api keys', 32));
	}

	seal(apiKey: string, boundTo: string): string {
		const iv = randomBytes(12);
		const cipher = createCipheriv('aes-256-gcm', this.key, iv);
		// The record's own name is bound in: a sealed key copied to another account's record does not open.
		cipher.setAAD(Buffer.from(boundTo));
		const body = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
		return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
	}

	/** The key, or undefined when the text was not sealed by this secret for this record. */
	open(sealed: string, boundTo: string): string | undefined {
		const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
		if (!iv || !tag || !body) return undefined;
		try {
			const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
			decipher.setAAD(Buffer.from(boundTo));
			decipher.setAuthTag(tag);
			return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
		} catch {
			return undefined;
		}
	}
}
