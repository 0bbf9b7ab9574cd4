import type { PlanName } from '../../../core';
import type { SpendCap } from '../settings';
import type { AccountId } from './accounts';
import { VIDEO_SCOPE, type AuthServer } from './authServer';

/** Who a signed-in call is made for, beside the key it uses: a team member has a cap and a record of their own. */
export interface SignedIn {
	accountId: AccountId;
	/** `since`: when the member was added (their jobs are those made since; see ownJob). */
	member?: { name: string; cap?: SpendCap; since?: number };
}

/** What the SDK hands each tool call as ctx.http.authInfo (its AuthInfo), with our part in `extra`. */
export interface CallAuth {
	token: string;
	clientId: string;
	scopes: string[];
	/** Seconds since the epoch. */
	expiresAt?: number;
	resource?: URL;
	extra?: { apiKey: string; plan: PlanName; signedIn: SignedIn };
}

export type BearerAccess =
	| { ok: true; auth?: CallAuth }
	| {
			ok: false;
			status: 401 | 403;
			error?: 'invalid_token' | 'insufficient_scope';
			message: string;
	  };

/**
 * The shape of this server's access tokens (oidc-provider's 256 random bits, base64url). A bearer of
 * this shape that is no live token of ours is refused here, with no request sent: it is one of ours
 * expired or revoked, never an API key to try on the service.
 */
const OUR_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * What a request's bearer stands for on a server with sign-in on (the MCP authorization spec's
 * resource server): an access token of ours (for this resource, live, its account still there)
 * becomes the key it stands for; any other bearer is an API key, as without sign-in; no bearer
 * at all is refused with the 401 that starts an app's sign-in. Every refusal is decided from our
 * own records: none costs a request to the service.
 */
export class BearerGate {
	constructor(
		private readonly auth: AuthServer,
		/** The key, plan and person a token's account stands for, while it is there. */
		private readonly resolve: (accountId: AccountId) => Promise<CallAuth['extra']>,
	) {}

	/** Where an app finds how to sign in (RFC 9728): this server's protected resource metadata. */
	get metadataUrl(): string {
		return `${this.auth.issuer}/.well-known/oauth-protected-resource/mcp`;
	}

	metadata(): Record<string, unknown> {
		return {
			resource: this.auth.resource,
			authorization_servers: [this.auth.issuer],
			scopes_supported: [VIDEO_SCOPE],
			bearer_methods_supported: ['header'],
			resource_name: 'Omni Video',
			resource_documentation:
				'https://github.com/omni-video/n8n-nodes-omni-video/blob/main/docs/mcp.md#claudeai-and-chatgpt',
		};
	}

	/** The WWW-Authenticate header of a refusal (RFC 6750, with RFC 9728's resource_metadata). */
	challenge(refusal: Extract<BearerAccess, { ok: false }>): string {
		const error = refusal.error
			? `, error="${refusal.error}", error_description="${refusal.message.replace(/["\\]/g, '')}"`
			: '';
		return `Bearer resource_metadata="${this.metadataUrl}", scope="${VIDEO_SCOPE}"${error}`;
	}

	async check(bearer: string | undefined): Promise<BearerAccess> {
		if (bearer === undefined)
			return {
				ok: false,
				status: 401,
				message: 'Sign in to use this server: your app opens the sign-in page when you connect it.',
			};
		// Not of our tokens' shape: an Omni Video API key, sent by a client configured with one (as
		// without sign-in); never looked up, so that no key becomes a record's name in the store.
		if (!OUR_TOKEN.test(bearer)) return { ok: true };
		const token = await this.auth.provider.AccessToken.find(bearer);
		if (!token) return { ok: false, status: 401, error: 'invalid_token', message: 'This token has expired or was revoked: the app refreshes it or signs in again.' };
		if (token.isExpired)
			return {
				ok: false,
				status: 401,
				error: 'invalid_token',
				message: 'This token has expired: the app refreshes it or signs in again.',
			};
		const audiences = [token.aud].flat();
		if (!audiences.includes(this.auth.resource))
			return {
				ok: false,
				status: 401,
				error: 'invalid_token',
				message: `This token was issued for ${audiences.join(', ') || 'another resource'}, not for ${this.auth.resource}.`,
			};
		if (!token.scopes.has(VIDEO_SCOPE))
			return {
				ok: false,
				status: 403,
				error: 'insufficient_scope',
				message: `This token does not carry the ${VIDEO_SCOPE} scope.`,
			};
		const extra = await this.resolve(token.accountId as AccountId);
		if (!extra)
			return {
				ok: false,
				status: 401,
				error: 'invalid_token',
				message: 'The account this token stands for was removed: sign in again, or ask your admin.',
			};
		return {
			ok: true,
			auth: {
				token: bearer,
				clientId: token.clientId ?? '',
				scopes: [...token.scopes],
				expiresAt: token.exp,
				resource: new URL(this.auth.resource),
				extra,
			},
		};
	}
}
