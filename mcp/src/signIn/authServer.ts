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

/** What the authorization server did with a token, for the operator: never the token itself. */
export interface TokenEvent {
	event: 'grant' | 'refresh' | 'refresh_reuse' | 'revocation';
	accountId?: string;
	clientId?: string;
	clientName?: string;
}

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
	/** Told of each grant, refresh, refresh token reused, and revocation: for the operator's log and counters. */
	observe?: (event: TokenEvent) => void;
}): Promise<AuthServer> {
	// oidc-provider is an ES module: imported when sign-in is on, never by a server without it.
	const { default: Provider, errors } = await import('oidc-provider');
	const issuer = options.publicUrl;
	const resource = `${issuer}/mcp`;
	const configuration: Configuration = {
		adapter: oauthAdapter(options.store),
		clients: [],
		cookies: cookieSettings(issuer, derived(options.secret, 'cookie signing').toString('base64url')),
		jwks: { keys: [signingKey(options.secret)] },
		clientDefaults: {
			grant_types: ['authorization_code', 'refresh_token'],
			response_types: ['code'],
			token_endpoint_auth_method: 'none',
			id_token_signed_response_alg: 'EdDSA',
		},
		responseTypes: ['code'],
		// oidc-provider adds `openid` to these whatever is set: no grant ever carries it (the page grants
		// only these two), so no ID token is issued, and the metadata does not list it (see onlyWhatWeUse).
		scopes: [VIDEO_SCOPE, 'offline_access'],
		pkce: { required: () => true },
		// Public clients only (MCP's apps hold no secret): no client_secret_*, no private_key_jwt.
		clientAuthMethods: ['none'],
		// Only https redirects, or http to the app's own machine (OAuth 2.1 §2.3.1, MCP authorization),
		// for Dynamic Client Registration and Client ID Metadata Documents alike (both go through it).
		extraClientMetadata: {
			properties: ['redirect_uris'],
			validator: (_ctx, key, value) => {
				if (key !== 'redirect_uris' || !Array.isArray(value)) return;
				const unsafe = (value as unknown[]).find((uri) => typeof uri !== 'string' || !safeRedirectUri(uri));
				if (unsafe !== undefined)
					throw new errors.InvalidClientMetadata(
						`redirect_uris must be https addresses, or http on this machine's loopback (127.0.0.1, [::1], localhost): ${String(unsafe)} is neither, so a code sent there could be read on the way.`,
					);
			},
		},
		features: {
			devInteractions: { enabled: false },
			// Off: what the apps use is the authorization code with PKCE, refresh and revocation.
			pushedAuthorizationRequests: { enabled: false },
			dPoP: { enabled: false },
			introspection: { enabled: false },
			claimsParameter: { enabled: false },
			registration: { enabled: true },
			// An app revokes only its own tokens (public clients: another's is silently left alone, RFC 7009 §2.1).
			revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
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
		renderError: async (ctx, out) => {
			ctx.type = 'html';
			ctx.body = errorPage(out.error_description ?? out.error);
		},
	};
	const provider = new Provider(issuer, configuration);
	// Requests are taken to come by the public URL (see handle).
	provider.proxy = true;
	provider.use(noStoreNoFraming);
	provider.use(onlyWhatWeUse);
	const observe = options.observe;
	if (observe) {
		const about = (ctx: KoaContextWithOIDC) => {
			const { entities, client } = ctx.oidc;
			const token = entities.AccessToken ?? entities.RefreshToken ?? entities.Grant;
			return { accountId: token?.accountId as string | undefined, clientId: client?.clientId, clientName: client?.clientName };
		};
		provider.on('grant.success', (ctx: KoaContextWithOIDC) => observe({ event: ctx.oidc.params?.grant_type === 'refresh_token' ? 'refresh' : 'grant', ...about(ctx) }));
		provider.on('grant.error', (ctx: KoaContextWithOIDC, error: { error_detail?: string }) => {
			// oidc-provider's InvalidGrant says why in its detail: a rotated refresh token presented again (its grant is revoked).
			if (error.error_detail === 'refresh token already used') observe({ event: 'refresh_reuse', ...about(ctx) });
		});
		// oidc-provider emits no event for a revocation: seen as the revocation route's answer.
		const revocations = async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
			await next();
			if (ctx.oidc?.route === 'revocation' && ctx.status === 200 && (ctx.oidc.entities.AccessToken || ctx.oidc.entities.RefreshToken)) observe({ event: 'revocation', ...about(ctx) });
		};
		provider.use(revocations);
	}
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
			if (req.url?.startsWith(ROUTES.authorization)) {
				// Apps send the authorization request as a GET (the SDK, Claude.ai, ChatGPT): the POST form is not taken.
				if (req.method === 'POST') {
					res.writeHead(405, { allow: 'GET', 'cache-control': 'no-store', 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'none'" }).end();
					return;
				}
				req.url = withoutOpenId(req.url);
			}
			callback(req, res);
		},
	};
}

/**
 * An authorization request's scope without `openid`: oidc-provider always offers OpenID Connect's
 * scope, and asked for it would either issue an ID token (not used here) or ask again at every
 * resume. An app asking for it gets what there is (the token answer's scope says so), as OAuth lets
 * a server grant less than asked.
 */
function withoutOpenId(url: string): string {
	const parsed = new URL(url, 'http://server');
	const scope = parsed.searchParams.get('scope');
	if (scope === null || !scope.split(' ').includes('openid')) return url;
	parsed.searchParams.set('scope', scope.split(' ').filter((item) => item !== 'openid').join(' '));
	return `${parsed.pathname}${parsed.search}`;
}

/** A redirect URI an app may register: https, or http to a loopback address (the app on the person's machine). */
export function safeRedirectUri(uri: string): boolean {
	const url = URL.parse(uri);
	if (!url) return false;
	if (url.protocol === 'https:') return true;
	return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

/**
 * The cookies of a sign-in: signed with a key derived from the secret; on an https public URL
 * Secure, and `__Host-` (no Domain, Path=/, so no other host or path can set or shadow them) where
 * oidc-provider lets the path be /; the resume cookie's path is the resume route's, so it is `__Secure-`.
 */
export function cookieSettings(publicUrl: string, key: string): NonNullable<Configuration['cookies']> {
	const secure = new URL(publicUrl).protocol === 'https:';
	const options = { httpOnly: true, sameSite: 'lax' as const, path: '/', ...(secure ? { secure: true } : {}) };
	return {
		keys: [key],
		long: options,
		short: options,
		names: secure
			? { session: '__Host-session', interaction: '__Host-interaction', resume: '__Secure-interaction-resume' }
			: { session: '_session', interaction: '_interaction', resume: '_interaction_resume' },
	};
}

/**
 * Every answer of the authorization server (redirects, error pages, metadata, tokens) is neither
 * cached nor framed: a cached redirect would replay a code, a framed error page invite clickjacking.
 */
async function noStoreNoFraming(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
	await next();
	ctx.set('cache-control', 'no-store');
	ctx.set('x-frame-options', 'DENY');
	const policy = ctx.response.get('content-security-policy');
	if (!/frame-ancestors/.test(policy)) ctx.set('content-security-policy', policy ? `${policy}; frame-ancestors 'none'` : "frame-ancestors 'none'");
}

/** What the metadata advertises beyond what is used (oidc-provider always lists OpenID's parts): left out. */
const NOT_ADVERTISED = ['claims_supported', 'claims_parameter_supported', 'claim_types_supported', 'id_token_signing_alg_values_supported', 'subject_types_supported', 'request_uri_parameter_supported', 'token_endpoint_auth_signing_alg_values_supported'];

async function onlyWhatWeUse(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
	await next();
	if (ctx.oidc?.route !== 'discovery' || !ctx.body || typeof ctx.body !== 'object') return;
	const body = { ...(ctx.body as Record<string, unknown>) };
	for (const key of NOT_ADVERTISED) delete body[key];
	if (Array.isArray(body.scopes_supported)) body.scopes_supported = (body.scopes_supported as string[]).filter((scope) => scope !== 'openid');
	ctx.body = body;
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
