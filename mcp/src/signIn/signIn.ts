import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyFingerprint } from '../../../core';
import type { ToolContext } from '../context';
import type { StateStore } from '../state/store';
import type { AccountId } from './accounts';
import { createAuthServer } from './authServer';
import { BearerGate, type CallAuth } from './bearerAccess';
import { KeySeal } from './sealedKey';
import { SIGN_IN_PATH, SignInPage, type SignInCheck, type SignInForm } from './signInPage';

const PROTECTED_RESOURCE_PATHS = new Set(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']);

/** Sign-in on a server with a public URL: the authorization server, the sign-in page, and the gate every /mcp request passes. */
export interface SignIn {
	gate: BearerGate;
	/** Whether the path is sign-in's (metadata, the authorization server, the page). */
	serves(path: string): boolean;
	handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

/**
 * Wires what sign-in is made of to the server's settings and records: a person's own key (checked,
 * then sealed with the server's secret) or a team member (the team's key, their own cap); what an
 * account stands for is read at every request, so a removed member or forgotten key is refused
 * at once, everywhere.
 */
export async function startSignIn(context: ToolContext, store: StateStore): Promise<SignIn | undefined> {
	const { signIn, publicUrl, baseUrl } = context.settings;
	if (!signIn || publicUrl === undefined) return undefined;
	const { accounts } = context;
	const seal = new KeySeal(signIn.secret);

	const resolve = async (accountId: AccountId): Promise<CallAuth['extra']> => {
		if (accountId.startsWith('key:')) {
			const key = await accounts.keyOf(accountId.slice('key:'.length), seal);
			return key && { ...key, signedIn: { accountId } };
		}
		const member = signIn.way === 'team' ? await accounts.member(accountId.slice('member:'.length)) : undefined;
		const teamKey = context.settings.envApiKey;
		if (!member || !teamKey) return undefined;
		return { apiKey: teamKey, plan: context.settings.plan, signedIn: { accountId, member: { name: member.name, ...(member.cap ? { cap: member.cap } : {}) } } };
	};

	const check = async (form: SignInForm): Promise<SignInCheck> => {
		if (form.way === 'team') {
			const member = await accounts.memberSigningIn(form.member, form.code);
			return member ? { ok: true, accountId: `member:${member.name}` } : { ok: false, status: 401, reason: 'That member name and sign-in code do not match a member of this team. Check both with your admin.' };
		}
		if (baseUrl === '') return { ok: false, status: 503, reason: 'This server has no Omni Video address set (OMNI_VIDEO_BASE_URL): tell whoever runs it.' };
		const checked = await context.checkKey(form.apiKey, form.plan);
		if (!checked.ok) {
			const reason =
				checked.problem === 'key'
					? 'Omni Video did not accept this API key: check it in your Omni Video dashboard (it may be mistyped or revoked).'
					: checked.problem === 'no_api_access'
						? 'This key has no API access on its plan: check your plan in the Omni Video dashboard.'
						: `The key could not be checked just now (${checked.message}) Try again in a minute.`;
			return { ok: false, status: checked.problem === 'key' || checked.problem === 'no_api_access' ? 401 : 503, reason };
		}
		const fingerprint = keyFingerprint(form.apiKey, baseUrl);
		return { ok: true, accountId: await accounts.keepKey(fingerprint, form.apiKey, checked.servicePlan ?? form.plan, seal) };
	};

	const auth = await createAuthServer({
		publicUrl,
		secret: signIn.secret,
		accessTokenSeconds: signIn.accessTokenSeconds,
		store,
		accountLive: async (id) => (await resolve(id)) !== undefined,
		loopbackClientMetadata: process.env.OMNI_VIDEO_MCP_LOOPBACK_CLIENT_METADATA === '1',
	});
	const gate = new BearerGate(auth, resolve);
	const page = new SignInPage(auth, { way: signIn.way, secret: signIn.secret, publicUrl, check });
	return {
		gate,
		serves: (path) => PROTECTED_RESOURCE_PATHS.has(path) || auth.serves(path) || path.startsWith(SIGN_IN_PATH),
		async handle(req, res, path) {
			if (PROTECTED_RESOURCE_PATHS.has(path)) {
				res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(JSON.stringify(gate.metadata()));
				return;
			}
			if (path.startsWith(SIGN_IN_PATH)) return page.handle(req, res, path.slice(SIGN_IN_PATH.length));
			auth.handle(req, res);
		},
	};
}
