import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyFingerprint } from '../../../core';
import type { ToolContext } from '../context';
import type { StateStore } from '../state/store';
import type { AccountId } from '../signIn/accounts';
import { createAuthServer } from '../signIn/authServer';
import { BearerGate, type CallAuth } from '../signIn/bearerAccess';
import { KeySeal } from '../signIn/sealedKey';
import { SIGN_IN_PATH, SignInPage, type SignInCheck, type SignInForm } from '../signIn/signInPage';
import { clientAddress, SignInThrottle, type Held, type RefusalReason } from '../signIn/signInThrottle';
import { metrics } from '../telemetry/metrics';

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
		return { apiKey: teamKey, plan: context.settings.plan, signedIn: { accountId, member: { name: member.name, since: member.addedAtMs, ...(member.cap ? { cap: member.cap } : {}) } } };
	};

	const throttle = new SignInThrottle(store, signIn.limits);
	const replica = store.holder;
	// One line per event for the operator: who (member name or key fingerprint), which app, which replica; never a key, code or token.
	const note = (line: string) => context.say(`omni-video-mcp: sign-in: ${line}, on replica ${replica}`);
	const appOf = (app: { clientId: string; name: string }) => `app ${app.name} (${app.clientId})`;
	const noteRefused = (reason: RefusalReason, app: { clientId: string; name: string }, address: string) => {
		metrics.signInRefused(reason);
		note(`refused (${reason}) from ${address} for ${appOf(app)}`);
	};
	const refuse = (held: Held, app: { clientId: string; name: string }, address: string): SignInCheck => {
		noteRefused(held.reason, app, address);
		return { ok: false, status: 429, reason: heldReason(held) };
	};

	const check = async (form: SignInForm, app: { clientId: string; name: string }, address: string): Promise<SignInCheck> => {
		if (form.way === 'team') {
			// A locked name or address is refused before the code is looked at: guessing gets no answer.
			const held = await throttle.locked(address, form.member);
			if (held) return refuse(held, app, address);
			const member = await accounts.memberSigningIn(form.member, form.code);
			if (member) {
				// For the admin's `members list`; a sign-in is not refused for want of this note.
				await accounts.noteMemberSignIn(member.name, app).catch(() => undefined);
				await throttle.succeeded(form.member);
				metrics.signInEvent('sign_in');
				note(`member ${member.name} signed in from ${address} with ${appOf(app)}`);
				return { ok: true, accountId: `member:${member.name}` };
			}
			noteRefused('wrong_code', app, address);
			const locked = await throttle.failed(address, form.member);
			return { ok: false, status: 401, reason: `That member name and sign-in code do not match a member of this team. Check both with your admin.${locked ? ` ${heldReason(locked)}` : ''}` };
		}
		if (baseUrl === '') return { ok: false, status: 503, reason: 'This server has no Omni Video address set (OMNI_VIDEO_BASE_URL): tell whoever runs it.' };
		// Refused here, before the service is asked: a locked address, or the window's key checks used up.
		const held = (await throttle.locked(address)) ?? (await throttle.takeKeyCheck(address));
		if (held) return refuse(held, app, address);
		const checked = await context.checkKey(form.apiKey, form.plan);
		if (!checked.ok && (checked.problem === 'key' || checked.problem === 'no_api_access')) {
			noteRefused('wrong_key', app, address);
			const locked = await throttle.failed(address);
			if (locked) return { ok: false, status: 401, reason: `Omni Video did not accept this API key. ${heldReason(locked)}` };
		}
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
		metrics.signInEvent('sign_in');
		note(`key ${fingerprint} signed in from ${address} with ${appOf(app)}`);
		return { ok: true, accountId: await accounts.keepKey(fingerprint, form.apiKey, checked.servicePlan ?? form.plan, seal) };
	};

	const auth = await createAuthServer({
		publicUrl,
		secret: signIn.secret,
		accessTokenSeconds: signIn.accessTokenSeconds,
		store,
		accountLive: async (id) => (await resolve(id)) !== undefined,
		observe: ({ event, accountId, clientId, clientName }) => {
			metrics.signInEvent(event);
			note(`${event.replace('_', ' ')} for ${whoOf(accountId)} by app ${clientName ?? 'unnamed'} (${clientId ?? 'unknown client'})`);
		},
	});
	const gate = new BearerGate(auth, resolve);
	const page = new SignInPage(auth, { way: signIn.way, secret: signIn.secret, publicUrl, check, trustProxy: signIn.trustProxy });
	return {
		gate,
		serves: (path) => PROTECTED_RESOURCE_PATHS.has(path) || auth.serves(path) || path.startsWith(SIGN_IN_PATH),
		async handle(req, res, path) {
			if (PROTECTED_RESOURCE_PATHS.has(path)) {
				res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(JSON.stringify(gate.metadata()));
				return;
			}
			if (path.startsWith(SIGN_IN_PATH)) return page.handle(req, res, path.slice(SIGN_IN_PATH.length));
			// Registration is open to anyone: bounded per address, so that no one fills the records with apps.
			if (path === '/oauth/register' && req.method === 'POST') {
				const address = clientAddress(req, signIn.trustProxy);
				const held = await throttle.takeRegistration(address);
				if (held) {
					metrics.signInRefused(held.reason);
					note(`registration refused (${held.reason}) from ${address}`);
					res.writeHead(429, { 'content-type': 'application/json', 'cache-control': 'no-store', 'retry-after': String(secondsUntil(held)) });
					res.end(JSON.stringify({ error: 'temporarily_unavailable', error_description: heldReason(held) }));
					return;
				}
			}
			auth.handle(req, res);
		},
	};
}

/** Who an account is, as the log names it: a member by name, a key by its fingerprint. */
function whoOf(accountId: string | undefined): string {
	if (accountId?.startsWith('member:')) return `member ${accountId.slice('member:'.length)}`;
	if (accountId?.startsWith('key:')) return `key ${accountId.slice('key:'.length)}`;
	return 'an account';
}

/** What the page (or an app) is told about a refusal before any check: why, and how long to wait. */
/** Whole seconds until a refusal lifts, one at least: a page's wait and a Retry-After alike. */
const secondsUntil = (held: Held): number => Math.max(1, Math.ceil((held.untilMs - Date.now()) / 1000));

export function heldReason(held: Held): string {
	const seconds = secondsUntil(held);
	const wait = seconds >= 120 ? `${Math.ceil(seconds / 60)} minutes` : `${seconds} seconds`;
	switch (held.reason) {
		case 'member_locked':
			return `Too many wrong sign-in codes for this member name: it is locked for ${wait}, whoever tries. Wait, then try again, or ask your admin for a new code.`;
		case 'address_locked':
			return `Too many wrong tries from your network: sign-in from here is paused for ${wait}. Nothing was checked.`;
		case 'key_checks_address':
			return `This server has checked as many keys from your network as it does in one window: try again in ${wait}. Nothing was checked.`;
		case 'key_checks_all':
			return `This server has checked as many keys as it does in one window: try again in ${wait}. Nothing was checked.`;
		case 'registrations_address':
			return `Too many apps registered from this address: try again in ${wait}.`;
		default:
			return `Try again in ${wait}.`;
	}
}
