import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PlanName } from '../../../core';
import type { AccountId } from './accounts';
import { escapeHtml, VIDEO_SCOPE, type AuthServer } from './authServer';
import { clientAddress } from './signInThrottle';

/** The path of a sign-in: /signin/<the authorization server's interaction id>. */
export const SIGN_IN_PATH = '/signin/';

/** What the page asks for, by the way in the server runs with. */
export type SignInWay = 'own-key' | 'team';

/** What a filled-in form proves, or why not (said on the page again, nothing stored). */
export type SignInCheck =
	| { ok: true; accountId: AccountId }
	| { ok: false; status: number; reason: string };

export interface SignInPageOptions {
	way: SignInWay;
	secret: string;
	publicUrl: string;
	/** Checks what the person typed: their key (one lookup that costs no credits) or their member code; `app` is who asks. */
	check(form: SignInForm, app: { clientId: string; name: string }, address: string): Promise<SignInCheck>;
	/** Whether a proxy of the operator's is in front: `address` is then the one it saw (see clientAddress). */
	trustProxy: boolean;
}

export type SignInForm =
	| { way: 'own-key'; apiKey: string; plan: PlanName }
	| { way: 'team'; member: string; code: string };

/** A form post is a few short fields. */
const MAX_FORM_BYTES = 8_192;

/**
 * The sign-in page an app's authorization request lands on: it says which app asks for what, takes
 * the person's own API key and plan or their member name and code, and finishes the request with a
 * grant for this server's one resource. It protects itself: a per-sign-in CSRF token bound to the
 * interaction, the post's Origin checked, no framing (clickjacking), no caching, no referrer to the app, and
 * nothing secret in a URL (the key goes in a POST body and nowhere after).
 */
export class SignInPage {
	private readonly csrfKey: Buffer;

	constructor(
		private readonly auth: AuthServer,
		private readonly options: SignInPageOptions,
	) {
		this.csrfKey = Buffer.from(
			hkdfSync('sha256', options.secret, 'omni-video-mcp', 'sign-in csrf', 32),
		);
	}

	async handle(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
		let details;
		try {
			details = await this.auth.provider.interactionDetails(req, res);
		} catch {
			return this.send(
				res,
				400,
				page(
					'Sign-in expired',
					`<p>This sign-in is not open any more (it lasts 10 minutes, in the browser that started it). Go back to the app and connect again.</p>`,
				),
				undefined,
			);
		}
		if (details.uid !== uid)
			return this.send(
				res,
				400,
				page(
					'Sign-in expired',
					'<p>This page belongs to another sign-in. Go back to the app and connect again.</p>',
				),
				undefined,
			);
		const clientId = String(details.params.client_id);
		const client = await this.auth.provider.Client.find(clientId);
		const redirectUri = String(details.params.redirect_uri ?? '');
		const app = {
			name: client?.clientName ?? hostOf(clientId) ?? 'An app',
			host: hostOf(redirectUri) ?? 'an unknown address',
			// Who the app is, as far as this server can tell (a name is whatever the app says): the host
			// of its client_id URL when it is one (a metadata document, fetched from there), else where its codes go.
			from: (isUrl(clientId) ? hostOf(clientId) : hostOf(redirectUri)) ?? 'an unknown address',
			redirectOrigin: originOf(redirectUri),
		};
		if (req.method === 'GET') return this.send(res, 200, this.form(uid, app), app.redirectOrigin);
		if (req.method !== 'POST')
			return this.send(
				res,
				405,
				page('Not allowed', '<p>This page is shown and posted, nothing else.</p>'),
				undefined,
			);

		// A page on another site may not post here, even with the person's cookies.
		const origin = req.headers.origin;
		const site = req.headers['sec-fetch-site'];
		if ((origin !== undefined && origin !== new URL(this.options.publicUrl).origin) || (site !== undefined && site !== 'same-origin')) {
			return this.send(res, 403, page('Refused', '<p>This form was posted from another site. Nothing was stored.</p>'), undefined);
		}
		const form = new URLSearchParams(await readBody(req));
		if (!this.csrfMatches(uid, form.get('csrf') ?? ''))
			return this.send(
				res,
				403,
				page(
					'Refused',
					'<p>This form is out of date or was not sent by this page. Nothing was stored. Go back to the app and connect again.</p>',
				),
				undefined,
			);
		if (form.get('action') === 'deny') {
			return void (await this.auth.provider.interactionFinished(
				req,
				res,
				{ error: 'access_denied', error_description: 'The person declined to connect.' },
				{ mergeWithLastSubmission: false },
			));
		}
		const filled = this.read(form);
		const checked = filled.ok ? await this.options.check(filled.form, { clientId, name: app.name }, clientAddress(req, this.options.trustProxy)) : filled;
		if (!checked.ok)
			return this.send(
				res,
				checked.status,
				this.form(uid, app, checked.reason, form.get('member') ?? undefined),
				app.redirectOrigin,
			);

		// The page is the consent too: the app gets what it asked for of what there is (see createAuthServer's scopes).
		const grant = new this.auth.provider.Grant({ accountId: checked.accountId, clientId });
		const asked = String(details.params.scope ?? '').split(' ').filter((scope) => scope === VIDEO_SCOPE || scope === 'offline_access');
		if (asked.length) grant.addOIDCScope(asked.join(' '));
		grant.addResourceScope(this.auth.resource, VIDEO_SCOPE);
		const grantId = await grant.save();
		await this.auth.provider.interactionFinished(
			req,
			res,
			{ login: { accountId: checked.accountId }, consent: { grantId } },
			{ mergeWithLastSubmission: false },
		);
	}

	private read(
		form: URLSearchParams,
	): { ok: true; form: SignInForm } | { ok: false; status: number; reason: string } {
		if (this.options.way === 'team') {
			const member = (form.get('member') ?? '').trim();
			const code = (form.get('code') ?? '').trim();
			if (!member || !code)
				return {
					ok: false,
					status: 400,
					reason: 'Type your member name and the sign-in code your admin gave you.',
				};
			return { ok: true, form: { way: 'team', member, code } };
		}
		const apiKey = (form.get('apiKey') ?? '').trim();
		const plan = form.get('plan');
		if (!apiKey)
			return {
				ok: false,
				status: 400,
				reason: 'Paste your Omni Video API key (from your dashboard).',
			};
		if (plan !== 'pro' && plan !== 'premium')
			return { ok: false, status: 400, reason: 'Choose your plan: Pro or Premium.' };
		return { ok: true, form: { way: 'own-key', apiKey, plan } };
	}

	private csrf(uid: string): string {
		return createHmac('sha256', this.csrfKey).update(uid).digest('base64url');
	}

	private csrfMatches(uid: string, given: string): boolean {
		const expected = Buffer.from(this.csrf(uid));
		const actual = Buffer.from(given);
		return expected.length === actual.length && timingSafeEqual(expected, actual);
	}

	private form(
		uid: string,
		app: { name: string; host: string; from: string },
		problem?: string,
		member?: string,
	): string {
		const alert = problem
			? `<p class="problem" role="alert" id="problem">${escapeHtml(problem)} Nothing was stored.</p>`
			: '';
		const described = problem ? ' aria-describedby="problem" aria-invalid="true"' : '';
		const fields =
			this.options.way === 'team'
				? `<label for="member">Member name</label><input id="member" name="member" autocomplete="username" required value="${escapeHtml(member ?? '')}"${described}>
<label for="code">Sign-in code <span class="hint">(from your admin)</span></label><input id="code" name="code" type="password" autocomplete="off" required${described}>`
				: `<label for="apiKey">Omni Video API key <span class="hint">(from your Omni Video dashboard)</span></label><input id="apiKey" name="apiKey" type="password" autocomplete="off" spellcheck="false" required${described}>
<label for="plan">Plan</label><select id="plan" name="plan"><option value="pro">Pro</option><option value="premium">Premium</option></select>`;
		const kept =
			this.options.way === 'team'
				? 'The team’s key stays on this server; the app gets a token that works until you or your admin end it.'
				: 'Your key is checked with one lookup that costs no credits, then kept encrypted on this server. The app never sees it: it gets a token that works until you disconnect it.';
		return page(
			`Connect ${app.name} to Omni Video`,
			`${alert}<p class="from">From <strong>${escapeHtml(app.from)}</strong>. Continue only if you started this from an app you know at that address.</p>
<p><strong>${escapeHtml(app.name)}</strong> (returning to <strong>${escapeHtml(app.host)}</strong>) asks to make videos and read their status ${
				this.options.way === 'team'
					? 'with your team’s Omni Video key. Videos it makes use the team’s credits, within any cap your admin set for you.'
					: 'with your Omni Video account. Videos it makes use your credits.'
			}</p>
<form method="post" action="${SIGN_IN_PATH}${escapeHtml(uid)}">
<input type="hidden" name="csrf" value="${this.csrf(uid)}">
${fields}
<p class="hint">${kept}</p>
<div class="actions"><button type="submit" name="action" value="allow">Allow</button><button type="submit" name="action" value="deny" formnovalidate class="secondary">Cancel</button></div>
</form>`,
		);
	}

	private send(
		res: ServerResponse,
		status: number,
		html: string,
		redirectOrigin: string | undefined,
	): void {
		res.writeHead(status, {
			'content-type': 'text/html; charset=utf-8',
			// The form posts here, and the answer redirects to the app: nothing else may load, frame or be posted to.
			'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${redirectOrigin ? ` ${redirectOrigin}` : ''}; frame-ancestors 'none'; base-uri 'none'`,
			'x-frame-options': 'DENY',
			'x-content-type-options': 'nosniff',
			// Same-origin: the form's post names its origin (no-referrer would make it "null"), the app is told nothing.
			'referrer-policy': 'same-origin',
			'cache-control': 'no-store',
		});
		res.end(html);
	}
}

function page(title: string, body: string): string {
	return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:30rem;margin:0 auto;padding:1.5rem 1rem;line-height:1.5;color:#1a1a1a;background:#fff}
h1{font-size:1.4rem}label{display:block;margin-top:1rem;font-weight:600}
input,select{display:block;width:100%;box-sizing:border-box;font-size:1rem;padding:.6rem;margin-top:.3rem;border:1px solid #767676;border-radius:4px}
input:focus,select:focus,button:focus{outline:3px solid #1a5fb4;outline-offset:2px}
.from{font-size:1.1rem;background:#eef3fb;border-left:4px solid #1a5fb4;padding:.6rem .8rem}.hint{font-weight:400;color:#4a4a4a;font-size:.95rem}.problem{background:#fde7e9;border-left:4px solid #b00020;padding:.6rem .8rem}
.actions{display:flex;gap:.75rem;margin-top:1.25rem;flex-wrap:wrap}
button{font-size:1rem;padding:.65rem 1.4rem;border-radius:4px;border:1px solid #1a5fb4;background:#1a5fb4;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1a5fb4}
</style></head>
<body><main><h1>${escapeHtml(title)}</h1>
${body}
</main></body></html>`;
}

function hostOf(url: string): string | undefined {
	try {
		return new URL(url).host || undefined;
	} catch {
		return undefined;
	}
}

function isUrl(text: string): boolean {
	return /^https?:\/\//.test(text);
}

function originOf(url: string): string | undefined {
	try {
		const { origin } = new URL(url);
		return origin === 'null' ? undefined : origin;
	} catch {
		return undefined;
	}
}

async function readBody(req: IncomingMessage): Promise<string> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req as AsyncIterable<Buffer>) {
		size += chunk.length;
		if (size > MAX_FORM_BYTES) throw new Error('The form is larger than a sign-in form.');
		chunks.push(chunk);
	}
	return Buffer.concat(chunks).toString('utf8');
}
