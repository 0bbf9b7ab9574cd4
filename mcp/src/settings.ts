import { basename, dirname, resolve } from 'node:path';
import { defaultStateDir } from './state/stateDir';
import { signInLimits, type SignInLimits } from './signInLimits';
import { baseUrlProblem, normaliseBaseUrl, type PlanName } from '../../core';

/** How long a call waits for its video by default: inside the 60 s most clients allow a call. */
export const DEFAULT_WAIT_SECONDS = 45;
/** The longest wait a call may ask for: Claude Desktop cuts a call at about 4 minutes. */
export const MAX_WAIT_SECONDS = 600;
/** Same arguments within this window are a retry of the same request (docs/mcp.md#retries-and-new-videos). */
export const DEFAULT_RETRY_WINDOW_MINUTES = 10;

export interface SpendCap {
	credits: number;
	periodHours: number;
}

/** What the server runs with: from the environment and the command line, never the key's value. */
export interface Settings {
	transport: 'stdio' | 'http';
	host: string;
	port: number;
	/** Origins a browser page may call the HTTP server from (others get 403); none by default. */
	allowedOrigins: string[];
	/** Empty when unset: every tool call then says how to set it. */
	baseUrl: string;
	baseUrlProblem?: string;
	plan: PlanName;
	/** The key from OMNI_VIDEO_API_KEY; over HTTP a request's bearer header wins. */
	envApiKey?: string;
	waitSeconds: number;
	/** How long the user's jobs really take, when they know better than the 30-90 s estimate. */
	expectedRenderSeconds?: number;
	retryWindowMinutes: number;
	spendCap?: SpendCap;
	/**
	 * Where the records (ledger, spend, pacing, jobs seen) are kept, shared by every server process
	 * on the machine that uses the same folder: the platform's state folder by default, 'none' for
	 * memory only. The older --state-file F keeps them beside F, its name as their prefix. --redis
	 * URL: in Redis, shared by every replica of a team's server on any machine.
	 */
	state: { kind: 'dir'; dir: string; prefix?: string } | { kind: 'memory' } | { kind: 'redis'; url: string; cluster: boolean };
	/** Folders upload_image may read over stdio. */
	allowedDirs: string[];
	/**
	 * The address the service can reach this server at (HTTP only): creates then carry a callback URL
	 * to its /callbacks route, and a job's end is heard rather than looked up.
	 */
	publicUrl?: string;
	/** The key's `whsec_…` secret: callbacks are then verified by signature, not by a lookup. */
	webhookSecret?: string;
	/**
	 * With a public URL, apps such as Claude.ai and ChatGPT sign in (OAuth 2.1) rather than send a
	 * key: with the person's own key, or as a member of the team whose key the server holds. The
	 * secret (OMNI_VIDEO_MCP_SECRET) seals kept keys and signs the sign-in's cookies; every replica
	 * has the same one.
	 */
	signIn?: {
		way: SignInWay;
		secret: string;
		accessTokenSeconds: number;
		/** How hard sign-in pushes back on wrong tries, key checks and registrations (OMNI_VIDEO_MCP_SIGN_IN_LIMITS). */
		limits: SignInLimits;
		/** A proxy of the operator's is in front: a request's address is X-Forwarded-For's last entry (OMNI_VIDEO_MCP_TRUST_PROXY=1). */
		trustProxy: boolean;
	};
	/**
	 * The origins the service serves videos from (its CDN, which the spec leaves open): what the job
	 * view's content security policy lets it load, and nothing else. The API's own origin by default.
	 */
	videoOrigins: string[];
	/** The job view's dedicated sandbox origin, as the host asks for it (`_meta.ui.domain`), when set. */
	viewDomain?: string;
	/** What ChatGPT's domain check reads at /.well-known/openai-apps-challenge (HTTP only), when set. */
	openaiChallenge?: string;
}

export type SignInWay = 'own-key' | 'team';

/** A secret this long (OMNI_VIDEO_MCP_SECRET) is at least 192 bits of base64. */
const MIN_SECRET_LENGTH = 32;

export class SettingsError extends Error {}

type Env = Record<string, string | undefined>;

function positiveNumber(name: string, text: string | undefined, fallback: number | undefined, max = Infinity, min = Number.MIN_VALUE): number | undefined {
	if (text === undefined || text.trim() === '') return fallback;
	const value = Number(text);
	if (!Number.isFinite(value) || value < min || value > max) {
		throw new SettingsError(`${name} must be a number from ${min}${max < Infinity ? ` to ${max}` : ' up'} (got "${text}").`);
	}
	return value;
}

/** The value after `--flag` or in `--flag=value`. */
function flagValue(argv: string[], flag: string): string | undefined {
	const at = argv.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
	if (at < 0) return undefined;
	const arg = argv[at];
	if (arg.includes('=')) return arg.slice(flag.length + 1);
	const next = argv[at + 1];
	if (next === undefined || next.startsWith('--')) throw new SettingsError(`${flag} needs a value.`);
	return next;
}

const FLAGS = ['--http', '--port', '--host', '--allow-origin', '--wait-seconds', '--allow-dir', '--state-dir', '--state-file', '--redis', '--redis-cluster', '--public-url', '--sign-in', '--video-origin', '--view-domain', '--help'];

/** Reads the settings; a wrong one stops the server with a message saying which and how to fix it. */
export function readSettings(argv: string[], env: Env): Settings {
	for (const arg of argv) {
		if (!arg.startsWith('--')) continue;
		const name = arg.split('=')[0];
		if (name === '--api-key' || name === '--key') throw new SettingsError('The API key is read from OMNI_VIDEO_API_KEY (or, over HTTP, the Authorization: Bearer header), never from the command line, where other users of the machine can read it.');
		if (!FLAGS.includes(name)) throw new SettingsError(`Unknown option ${name}. Options: ${FLAGS.join(', ')}.`);
	}
	const http = argv.includes('--http');
	const baseUrl = normaliseBaseUrl(env.OMNI_VIDEO_BASE_URL ?? '');
	const planText = (env.OMNI_VIDEO_PLAN ?? 'pro').trim().toLowerCase();
	if (planText !== 'pro' && planText !== 'premium') throw new SettingsError(`OMNI_VIDEO_PLAN must be pro or premium (got "${env.OMNI_VIDEO_PLAN}").`);
	const capCredits = positiveNumber('OMNI_VIDEO_SPEND_CAP_CREDITS', env.OMNI_VIDEO_SPEND_CAP_CREDITS, undefined);
	const capHours = positiveNumber('OMNI_VIDEO_SPEND_CAP_HOURS', env.OMNI_VIDEO_SPEND_CAP_HOURS, 24) as number;
	const dirs = [...(env.OMNI_VIDEO_MCP_ALLOWED_DIRS ?? '').split(':'), ...flagValues(argv, '--allow-dir')].filter((dir) => dir.trim() !== '');
	const stateDir = (flagValue(argv, '--state-dir') ?? env.OMNI_VIDEO_MCP_STATE_DIR)?.trim();
	const stateFile = flagValue(argv, '--state-file') ?? env.OMNI_VIDEO_MCP_STATE_FILE;
	const redisUrl = (flagValue(argv, '--redis') ?? env.OMNI_VIDEO_MCP_REDIS_URL)?.trim() || undefined;
	const publicUrl = publicUrlSetting(flagValue(argv, '--public-url') ?? env.OMNI_VIDEO_MCP_PUBLIC_URL, http);
	// 0 picks a free port (tests); the chosen address is printed.
	const port = positiveNumber('--port', flagValue(argv, '--port') ?? env.OMNI_VIDEO_MCP_PORT, 3333, 65535, 0) as number;
	return {
		transport: http ? 'http' : 'stdio',
		host: flagValue(argv, '--host') ?? env.OMNI_VIDEO_MCP_HOST ?? '127.0.0.1',
		port: Math.floor(port),
		allowedOrigins: [...flagValues(argv, '--allow-origin'), ...(env.OMNI_VIDEO_MCP_ALLOWED_ORIGINS ?? '').split(',')].map((o) => o.trim()).filter(Boolean),
		baseUrl,
		baseUrlProblem: baseUrl === '' ? undefined : baseUrlProblem(baseUrl),
		plan: planText,
		envApiKey: env.OMNI_VIDEO_API_KEY?.trim() || undefined,
		waitSeconds: positiveNumber('--wait-seconds', flagValue(argv, '--wait-seconds') ?? env.OMNI_VIDEO_MCP_WAIT_SECONDS, DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS, 0) as number,
		expectedRenderSeconds: positiveNumber('OMNI_VIDEO_EXPECTED_RENDER_SECONDS', env.OMNI_VIDEO_EXPECTED_RENDER_SECONDS, undefined),
		retryWindowMinutes: positiveNumber('OMNI_VIDEO_MCP_RETRY_WINDOW_MINUTES', env.OMNI_VIDEO_MCP_RETRY_WINDOW_MINUTES, DEFAULT_RETRY_WINDOW_MINUTES) as number,
		spendCap: capCredits === undefined ? undefined : { credits: capCredits, periodHours: capHours },
		state: redisUrl !== undefined ? redisSetting(redisUrl, stateDir ?? stateFile, argv.includes('--redis-cluster') || env.OMNI_VIDEO_MCP_REDIS_CLUSTER === '1') : stateSetting(stateDir, stateFile, env),
		allowedDirs: dirs.map((dir) => resolve(dir)),
		publicUrl,
		webhookSecret: env.OMNI_VIDEO_WEBHOOK_SECRET?.trim() || undefined,
		signIn: signInSetting(flagValue(argv, '--sign-in') ?? env.OMNI_VIDEO_MCP_SIGN_IN, publicUrl, env),
		videoOrigins: videoOriginsSetting([...flagValues(argv, '--video-origin'), ...(env.OMNI_VIDEO_VIDEO_ORIGINS ?? '').split(',')], baseUrl),
		viewDomain: (flagValue(argv, '--view-domain') ?? env.OMNI_VIDEO_MCP_VIEW_DOMAIN)?.trim() || undefined,
		openaiChallenge: env.OMNI_VIDEO_MCP_OPENAI_CHALLENGE?.trim() || undefined,
	};
}

/** Each given origin as an origin (scheme, host, port); none given, the API's own. */
function videoOriginsSetting(texts: string[], baseUrl: string): string[] {
	const given = texts.map((text) => text.trim()).filter(Boolean);
	const origins = given.map((text) => {
		let url: URL;
		try {
			url = new URL(text);
		} catch {
			throw new SettingsError(`--video-origin (OMNI_VIDEO_VIDEO_ORIGINS) must be the origin the service serves videos from, such as https://cdn.example.com (got "${text}").`);
		}
		if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new SettingsError(`--video-origin must be an https origin (got "${text}").`);
		return url.origin;
	});
	if (origins.length > 0) return [...new Set(origins)];
	if (baseUrl === '') return [];
	try {
		return [new URL(baseUrl).origin];
	} catch {
		return [];
	}
}

/** Sign-in is on with a public URL (own keys unless said otherwise), off without one or with --sign-in off. */
function signInSetting(text: string | undefined, publicUrl: string | undefined, env: Env): Settings['signIn'] {
	const way = (text ?? 'own-key').trim().toLowerCase();
	if (way !== 'own-key' && way !== 'team' && way !== 'off') throw new SettingsError(`--sign-in (OMNI_VIDEO_MCP_SIGN_IN) is own-key, team or off (got "${text}").`);
	if (way === 'off') return undefined;
	if (publicUrl === undefined) {
		if (text === undefined) return undefined;
		throw new SettingsError('--sign-in needs --public-url: the address people and apps reach this server at, which is also where they sign in.');
	}
	const url = new URL(publicUrl);
	if (url.pathname !== '/' && url.pathname !== '') throw new SettingsError(`Sign-in needs the public URL to be an address of its own, without a path (got "${publicUrl}"): give the server its own host name, or --sign-in off.`);
	if (url.protocol !== 'https:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
		throw new SettingsError(`Sign-in needs an https public URL (got "${publicUrl}"): tokens and keys must not cross the network in the clear. Put the server behind TLS, or --sign-in off.`);
	}
	const secret = env.OMNI_VIDEO_MCP_SECRET?.trim() ?? '';
	if (secret.length < MIN_SECRET_LENGTH) {
		throw new SettingsError(
			`Sign-in (on with --public-url) needs OMNI_VIDEO_MCP_SECRET, at least ${MIN_SECRET_LENGTH} characters, the same on every replica: make one with \`openssl rand -base64 32\`. Or start with --sign-in off to take only API keys as bearer tokens.`,
		);
	}
	if (way === 'team' && !env.OMNI_VIDEO_API_KEY?.trim()) throw new SettingsError('--sign-in team needs the team\'s key in OMNI_VIDEO_API_KEY: members sign in, and their calls use it.');
	const accessTokenSeconds = positiveNumber('OMNI_VIDEO_MCP_ACCESS_TOKEN_SECONDS', env.OMNI_VIDEO_MCP_ACCESS_TOKEN_SECONDS, 3_600, 86_400, 10) as number;
	let limits: SignInLimits;
	try {
		limits = signInLimits(env.OMNI_VIDEO_MCP_SIGN_IN_LIMITS);
	} catch (error) {
		throw new SettingsError(error instanceof Error ? error.message : String(error));
	}
	const trustProxy = (env.OMNI_VIDEO_MCP_TRUST_PROXY ?? '').trim();
	if (!['', '0', '1'].includes(trustProxy)) throw new SettingsError(`OMNI_VIDEO_MCP_TRUST_PROXY is 1 (a proxy of yours is in front and sets X-Forwarded-For) or 0 (got "${trustProxy}").`);
	return { way, secret, accessTokenSeconds: Math.floor(accessTokenSeconds), limits, trustProxy: trustProxy === '1' };
}

/** The public address, without a trailing slash; only an HTTP server can be called back. */
function publicUrlSetting(text: string | undefined, http: boolean): string | undefined {
	const value = text?.trim();
	if (!value) return undefined;
	if (!http) throw new SettingsError('--public-url (OMNI_VIDEO_MCP_PUBLIC_URL) needs --http: the service calls the server back over HTTP, which a stdio server does not serve.');
	let url: URL;
	try {
		url = new URL(value);
	} catch {
		throw new SettingsError(`--public-url must be the https address the service can reach this server at, such as https://mcp.example.com (got "${value}").`);
	}
	if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new SettingsError(`--public-url must be an https address (got "${value}").`);
	return url.toString().replace(/\/+$/, '');
}

/** Redis, by a redis:// or rediss:// URL (with --redis-cluster, any node of a Redis Cluster); a records folder beside it would be a second, unshared copy. */
function redisSetting(url: string, alsoFolder: string | undefined, cluster: boolean): Settings['state'] {
	if (!/^rediss?:\/\/[^/]/.test(url)) throw new SettingsError(`--redis (OMNI_VIDEO_MCP_REDIS_URL) must be a redis:// or rediss:// URL, such as redis://127.0.0.1:6379 (got "${url}").`);
	if (alsoFolder !== undefined) throw new SettingsError('--redis keeps the records in Redis: leave out --state-dir and --state-file (OMNI_VIDEO_MCP_STATE_DIR, OMNI_VIDEO_MCP_STATE_FILE), or --redis.');
	return { kind: 'redis', url, cluster };
}

/** --state-dir wins, then --state-file, then the platform's state folder. */
function stateSetting(stateDir: string | undefined, stateFile: string | undefined, env: Env): Settings['state'] {
	if (stateDir?.toLowerCase() === 'none') return { kind: 'memory' };
	if (stateDir) return { kind: 'dir', dir: resolve(stateDir) };
	if (stateFile) return { kind: 'dir', dir: dirname(resolve(stateFile)), prefix: `${basename(stateFile)}.` };
	return { kind: 'dir', dir: defaultStateDir(env) };
}

/** Every value of a repeatable flag. */
function flagValues(argv: string[], flag: string): string[] {
	const values: string[] = [];
	argv.forEach((arg, i) => {
		if (arg === flag && argv[i + 1] !== undefined) values.push(argv[i + 1]);
		else if (arg.startsWith(`${flag}=`)) values.push(arg.slice(flag.length + 1));
	});
	return values;
}

/** The call's own wait, else the server's, within 0 to MAX_WAIT_SECONDS. */
export function boundedWait(asked: number | undefined, serverDefault: number): number {
	if (asked === undefined || !Number.isFinite(asked)) return serverDefault;
	return Math.min(MAX_WAIT_SECONDS, Math.max(0, asked));
}
