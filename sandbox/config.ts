/* eslint-disable @n8n/community-nodes/no-restricted-imports -- dev tooling, never shipped in the n8n package */
import { readFileSync } from 'node:fs';
import { PLANS, type PlanLimits } from '../core/types';
import defaults from './default-config.json';
import type { FaultRateConfig } from './faultRates';
import type { RenderTimeModel } from './renderTimes';
import { resolveSwitches, serviceFromEnvironment, serviceProfileName, SERVICE_PROFILES, type ServiceProfileName, type ServiceSwitches } from './service';

export interface KeyConfig {
	key: string;
	account: string;
	/** Optional credit budget of this key. */
	budget?: number;
	revoked?: boolean;
	/** Scenarios applied to every request made with this key. */
	scenarios?: string[];
	label?: string;
	/** How `echo-key` quotes this key (an ECHO_ENCODINGS name; X-Sandbox-Echo overrides it). */
	echo?: string;
}

export interface AccountConfig {
	id: string;
	plan: 'pro' | 'premium' | 'none' | PlanLimits;
	balance: number;
	/** The user id in CDN paths. */
	userId?: string;
}

export interface SandboxConfig extends ServiceSwitches {
	/**
	 * The reading of the spec's open points (sandbox/service.ts): `default` is docs/api.md's decisions,
	 * `spec` the strictest reading. Any switch given beside it wins over the profile's.
	 */
	service: ServiceProfileName;
	port: number;
	host: string;
	speed: number;
	/** Accept http:// callbacks to loopback hosts (local development and tests only). */
	insecureCallbacks: boolean;
	webhookSecret: string;
	accounts: AccountConfig[];
	keys: KeyConfig[];
	/** Credits per output second, by resolution. */
	prices: Record<'720P' | '1080P' | '4K', number>;
	maxUploadBytes: number;
	/** Size of the MP4 served in large-file mode (`?large=1` or the `large-output` scenario). */
	largeFileBytes: number;
	/** Size of the JSON answer sent by the `huge-answer` scenario. */
	hugeAnswerBytes: number;
	/** How long (real ms) `timeout-after-accept` holds the response before cutting the socket. */
	holdMs: number;
	/** Real ms added by `slow-response`. */
	slowMs: number;
	/** How many requests a `rate-limit-storm` refuses. */
	stormLength: number;
	/** How long jobs take: seeded draws across 30–90 s by size (see renderTimes.ts). */
	renderTimes: RenderTimeModel;
	/** Public base of the CDN; defaults to the sandbox's own URL. */
	cdnUrl?: string;
	/**
	 * Whose clock the clients read: `real` (default) gives `Retry-After` in real seconds and signs
	 * callbacks with real timestamps; `sandbox` (clients given the sandbox's clock, as the bench
	 * does) gives both in virtual time, so that a sped-up client waits and verifies as a real one.
	 */
	clientClock?: 'real' | 'sandbox';
	/** Faults drawn at random (seeded): lost callback deliveries and 503s; none by default. */
	faultRates?: FaultRateConfig;
}

/**
 * Deterministic defaults, kept as a config file of their own (the same format as --config), so
 * that sandbox/README.md's curl commands work as written.
 */
export const DEFAULT_CONFIG: SandboxConfig = { ...(defaults as Omit<SandboxConfig, 'service' | keyof ServiceSwitches>), service: 'default', ...SERVICE_PROFILES.default };

export function planLimits(plan: AccountConfig['plan']): PlanLimits | undefined {
	if (plan === 'none') return undefined;
	return typeof plan === 'object' ? plan : PLANS[plan];
}

/** The keys a test or a person reaches for, by what they are for. */
export interface SandboxKeys {
	pro: string;
	premium: string;
	/** A key with a credit budget of its own. */
	budget: string;
	revoked: string;
	/** A key of an account whose plan has no API access. */
	noApiAccess: string;
}

type AccountPlans = Map<string, AccountConfig['plan']>;

/** A key with nothing special: not revoked, no budget, no scenarios. */
const isPlain = (key: KeyConfig) => key.revoked !== true && key.budget === undefined && (key.scenarios ?? []).length === 0;

const KEY_ROLES: Record<keyof SandboxKeys, (key: KeyConfig, plans: AccountPlans) => boolean> = {
	pro: (key, plans) => isPlain(key) && plans.get(key.account) === 'pro',
	premium: (key, plans) => isPlain(key) && plans.get(key.account) === 'premium',
	budget: (key) => key.revoked !== true && key.budget !== undefined,
	revoked: (key) => key.revoked === true,
	noApiAccess: (key, plans) => key.revoked !== true && plans.get(key.account) === 'none',
};

const ROLES = Object.keys(KEY_ROLES) as Array<keyof SandboxKeys>;

/** The config's first key for each role; a role no key fits is absent. */
export function keysByRole(config: SandboxConfig): Partial<SandboxKeys> {
	const plans: AccountPlans = new Map(config.accounts.map((account) => [account.id, account.plan]));
	const found: Partial<SandboxKeys> = {};
	for (const role of ROLES) {
		const key = config.keys.find((candidate) => KEY_ROLES[role](candidate, plans));
		if (key) found[role] = key.key;
	}
	return found;
}

/** Every role's key; asking for a role no key of the config fits throws, naming the role. */
export function sandboxKeys(config: SandboxConfig): SandboxKeys {
	const found = keysByRole(config);
	const keys = {} as SandboxKeys;
	for (const role of ROLES) {
		const get = () => {
			const key = found[role];
			if (key === undefined) throw new Error(`The sandbox's config has no ${role} key (sandbox/README.md says which keys fit each role).`);
			return key;
		};
		Object.defineProperty(keys, role, { enumerable: true, get });
	}
	return keys;
}

/**
 * Defaults, overlaid with a JSON config file, overlaid with explicit options. The service profile
 * is the one named explicitly, else in the file, else by OMNI_SANDBOX_SERVICE, else `default`; its
 * switches sit below any switch the file or the options set.
 */
export function resolveConfig(options: Partial<SandboxConfig> & { configFile?: string } = {}): SandboxConfig {
	const { configFile, ...explicit } = options;
	const fromFile: Partial<SandboxConfig> = configFile ? JSON.parse(readFileSync(configFile, 'utf8')) : {};
	const defined: Partial<SandboxConfig> = Object.fromEntries(Object.entries(explicit).filter(([, v]) => v !== undefined));
	const service =
		defined.service !== undefined
			? serviceProfileName(defined.service, 'service')
			: fromFile.service !== undefined
				? serviceProfileName(fromFile.service, configFile ?? 'config')
				: (serviceFromEnvironment() ?? 'default');
	return { ...DEFAULT_CONFIG, ...fromFile, ...defined, service, ...resolveSwitches(service, fromFile, defined) };
}
