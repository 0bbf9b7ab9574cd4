import { createPrivateKey, hkdfSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Configuration, default as ProviderType, KoaContextWithOIDC } from 'oidc-provider';
import type { StateStore } from '../state/store';
import type { AccountId } from './accounts';
import { oauthAdapter } from './oauthRecords';

/** What a token lets an app do: make and read videos on the signed-in key. The one scope there is. */
export const VIDEO_SCOPE = 'videos';
const REFRESH_TOKEN_SECONDS = 30 * 24 * 3_600;
/** A sign-in page left open this long expires; the app starts again. */
export const SIGN_IN_SECONDS = 600;

/** The authorization server's own routes, under /oauth/ so that they never meet /mcp's or the sign-in page's. */
const ROUTES = {
	authorization: '/oauth/authorize',
	token: '/oauth/token',
	registration: '/oauth/register',
	revocation: '/oauth/revoke',
	jwks: '/oauth/jwks',
	end_session: '/oauth/logout',
	introspection: '/oauth/introspect',
	userinfo: '/oauth/userinfo',
	pushed_authorization_request: '/oauth/par',
	code_verification: '/oauth/device',
	device_authorization: '/oauth/device/auth',
	backchannel_authentication: '/oauth/backchannel',
	challenge: '/oauth/challenge',
} as const;

export interface AuthServer {
	provider: ProviderType;
	/** This server's MCP endpoint as a resource (RFC 8707): the only audience its tokens have. */
	resource: string;
	issuer: string;
	/** Whether the path is the authorization server's (its metadata or one of its endpoints). */
	serves(path: string): boolean;
	handle(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * The OAuth 2.1 authorization server beside the MCP endpoint, on panva's oidc-provider (certified,
 * maintained): authorization code with PKCE S256 only, Dynamic Client Registration and Client ID
 * Metadata Documents (how Claude.ai and ChatGPT register), the resource parameter checked against
 * this server's one resource, `iss` in every authorization response, opaque access tokens of an
 * hour, refresh tokens rotated at each use (a used one presented again revokes its grant),
 * revocation. Its records are the server's own (oauthAdapter); what is ours is the sign-in page
 * (/signin/…) and what a token stands for (Accounts).
 */
export async function createAuthServer(options: {
	publicUrl: string;
	secret: string;
	/** Access tokens are short-lived (an hour unless set): an app refreshes them; a removed member or revoked grant is refused at once anyway. */
	accessTokenSeconds: number;
	store: StateStore;
	accountLive: (id: AccountId) => Promise<boolean>;
	/**
	 * Lets a client ID metadata document on this machine's own addresses be fetched: for developing
	 * a client locally. Otherwise oidc-provider refuses loopback and private addresses (SSRF).
	 */
	loopbackClientMetadata?: boolean;
}): Promise<AuthServer> {
	// oidc-provider is an ES module: imported when sign-in is on, never by a server without it.
	const { default: Provider, errors } = await import('oidc-provider');
	const issuer = options.publicUrl;
	const resource = `${issuer}/mcp`;
	const configuration: Configuration = {
		adapter: oauthAdapter(options.store),
		clients: [],
		cookies: { keys: [derived(options.secret, 'cookie signing').toString('base64url')] },
		jwks: { keys: [signingKey(options.secret)] },
		clientDefaults: {
			grant_types: ['authorization_code', 'refresh_token'],
			response_types: ['code'],
			token_endpoint_auth_method: 'none',
			id_token_signed_response_alg: 'EdDSA',
		},
		responseTypes: ['code'],
		scopes: [VIDEO_SCOPE, 'offline_access'],
		pkce: { required: () => true },
		features: {
			devInteractions: { enabled: false },
			registration: { enabled: true },
			revocation: { enabled: true },
			rpInitiatedLogout: { enabled: false },
			userinfo: { enabled: false },
			clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
			resourceIndicators: {
				enabled: true,
				defaultResource: () => resource,
				useGrantedResource: () => true,
				getResourceServerInfo: (_ctx, indicator) => {
					if (indicator !== resource)
						throw new errors.InvalidTarget(`this server issues tokens for ${resource} only`);
					return {
						scope: VIDEO_SCOPE,
						audience: resource,
						accessTokenTTL: options.accessTokenSeconds,
						accessTokenFormat: 'opaque',
					};
				},
			},
		},
		issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
		rotateRefreshToken: true,
		ttl: {
			AccessToken: options.accessTokenSeconds,
			AuthorizationCode: 60,
			RefreshToken: REFRESH_TOKEN_SECONDS,
			Grant: REFRESH_TOKEN_SECONDS,
			Interaction: SIGN_IN_SECONDS,
			Session: REFRESH_TOKEN_SECONDS,
		},
		interactions: { url: (_ctx, interaction) => `${issuer}/signin/${interaction.uid}` },
		routes: ROUTES,
		// Removed members and forgotten keys get no new tokens: refreshing asks for the account again.
		findAccount: async (_ctx: KoaContextWithOIDC, id: string) =>
			(await options.accountLive(id as AccountId))
				? { accountId: id, claims: () => ({ sub: id }) }
				: undefined,
		...(options.loopbackClientMetadata ? { fetch: (url: string | URL | Request, init?: RequestInit) => fetch(url, { ...init, dispatcher: undefined } as RequestInit) } : {}),
		renderError: async (ctx, out) => {
			ctx.type = 'html';
			ctx.body = errorPage(out.error_description ?? out.error);
		},
	};
	const provider = new Provider(issuer, configuration);
	// Requests are taken to come by the public URL (see handle).
	provider.proxy = true;
	const callback = provider.callback();
	const { host: publicHost, protocol } = new URL(issuer);
	const publicProto = protocol.replace(':', '');
	const paths = new Set<string>([
		'/.well-known/openid-configuration',
		'/.well-known/oauth-authorization-server',
	]);
	return {
		provider,
		resource,
		issuer,
		serves: (path) => paths.has(path) || path.startsWith('/oauth/'),
		handle(req, res) {
			// RFC 8414's address for the same metadata.
			if (req.url?.startsWith('/.well-known/oauth-authorization-server')) req.url = req.url.replace('/.well-known/oauth-authorization-server', '/.well-known/openid-configuration');
			// Every address it makes (a resume, a redirect) is on the public URL, whatever Host a proxy in front passed.
			req.headers['x-forwarded-host'] = publicHost;
			req.headers['x-forwarded-proto'] = publicProto;
			callback(req, res);
		},
	};
}

function derived(secret: string, purpose: string): Buffer {
	return Buffer.from(hkdfSync('sha256', secret, 'omni-video-mcp', purpose, 32));
}

/**
 * The server's signing key, derived from its secret: every replica has the same one, and none is
 * stored. No token is signed with it (access tokens are opaque, and no ID token is issued without
 * the openid scope), but the server's metadata publishes one.
 */
function signingKey(secret: string): {
	kty: string;
	crv: string;
	d: string;
	x: string;
	alg: string;
	use: string;
} {
	// An Ed25519 private key is its 32-byte seed, in PKCS #8 after this fixed prefix.
	const der = Buffer.concat([
		Buffer.from('302e020100300506032b657004220420', 'hex'),
		derived(secret, 'signing key'),
	]);
	const jwk = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({
		format: 'jwk',
	}) as { kty: string; crv: string; d: string; x: string };
	return { ...jwk, alg: 'EdDSA', use: 'sig' };
}

function errorPage(message: string): string {
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in stopped · Omni Video</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;line-height:1.5"><h1>Sign-in stopped</h1><p>${escapeHtml(message)}</p><p>Nothing was stored. Go back to the app and add the connector again.</p></body></html>`;
}

export function escapeHtml(text: string): string {
	return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
