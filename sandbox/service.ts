/* eslint-disable @n8n/community-nodes/no-restricted-globals -- dev tooling, never shipped in the n8n package: reads OMNI_SANDBOX_SERVICE */

/**
 * The spec leaves open every point below ("not shown"); docs/api.md decides each, and the sandbox
 * answers by those decisions unless told otherwise. Each switch is one open point that a promise of
 * ours leans on, so that a test can take the decision away and see whether the promise still holds.
 */
export interface ServiceSwitches {
	/** `replayed`: a create or upload ticket sent again with the same Idempotency-Key gets the first answer; `ignored`: every request is new. */
	idempotencyKeys: 'replayed' | 'ignored';
	/** `signed`: Standard Webhooks headers on every callback; `unsigned`: none of them. */
	callbackSigning: 'signed' | 'unsigned';
	/** `retried`: today's schedule (5 s … 10 h); `once`: one attempt, whatever its answer; `never`: no callback at all. */
	callbackDelivery: 'retried' | 'once' | 'never';
	/** Whether a job that ends `failed` gets a callback (`done` always does, unless delivery is `never`). */
	failedJobCallbacks: boolean;
	/** Whether records of running jobs carry `progress`. */
	reportProgress: boolean;
	/** Whether answers carry X-RateLimit-Limit/-Remaining/-Reset. */
	rateLimitHeaders: boolean;
	/** Whether a 429 carries Retry-After. */
	retryAfter: boolean;
	/** Whether a 429 says which limit it is (`rate_limited` or `concurrency_limited`); otherwise both are `too_many_requests`. */
	distinctLimitCodes: boolean;
}

export type ServiceProfileName = 'default' | 'spec';

export const SERVICE_SWITCH_NAMES = [
	'idempotencyKeys',
	'callbackSigning',
	'callbackDelivery',
	'failedJobCallbacks',
	'reportProgress',
	'rateLimitHeaders',
	'retryAfter',
	'distinctLimitCodes',
] as const satisfies ReadonlyArray<keyof ServiceSwitches>;

export const SERVICE_PROFILES: Record<ServiceProfileName, ServiceSwitches> = {
	/** docs/api.md's decisions. */
	default: {
		idempotencyKeys: 'replayed',
		callbackSigning: 'signed',
		callbackDelivery: 'retried',
		failedJobCallbacks: true,
		reportProgress: true,
		rateLimitHeaders: true,
		retryAfter: true,
		distinctLimitCodes: true,
	},
	/** The strictest reading of the spec: nothing it does not show. */
	spec: {
		idempotencyKeys: 'ignored',
		callbackSigning: 'unsigned',
		callbackDelivery: 'once',
		failedJobCallbacks: false,
		reportProgress: false,
		rateLimitHeaders: false,
		retryAfter: false,
		distinctLimitCodes: false,
	},
};

export const SERVICE_ENV = 'OMNI_SANDBOX_SERVICE';

export function isServiceProfileName(value: unknown): value is ServiceProfileName {
	return typeof value === 'string' && Object.prototype.hasOwnProperty.call(SERVICE_PROFILES, value);
}

/** Checks a profile name from a person (flag, env, config file), naming the choices when it is wrong. */
export function serviceProfileName(value: unknown, from: string): ServiceProfileName {
	if (isServiceProfileName(value)) return value;
	throw new Error(`${from}: unknown service profile ${JSON.stringify(value)} (choose ${Object.keys(SERVICE_PROFILES).join(' or ')}).`);
}

/** The profile named by OMNI_SANDBOX_SERVICE, if set: lets a whole suite run on either reading unedited. */
export function serviceFromEnvironment(): ServiceProfileName | undefined {
	const value = process.env[SERVICE_ENV];
	if (value === undefined || value === '') return undefined;
	return serviceProfileName(value, SERVICE_ENV);
}

/** A switch's value from text (`--switch name=value`), checked against what the switch takes. */
export function parseSwitch(text: string): Partial<ServiceSwitches> {
	const [name, value] = text.split('=', 2);
	const switchName = SERVICE_SWITCH_NAMES.find((candidate) => candidate === name);
	if (!switchName || value === undefined) throw new Error(`--switch takes NAME=VALUE, NAME one of ${SERVICE_SWITCH_NAMES.join(', ')} (got ${text}).`);
	const allowed = SWITCH_VALUES[switchName];
	const parsed = allowed.find((candidate) => String(candidate) === value);
	if (parsed === undefined) throw new Error(`${switchName} takes ${allowed.join(' or ')} (got ${value}).`);
	return { [switchName]: parsed };
}

/** The values each switch takes, its default reading first. */
export const SWITCH_VALUES: { readonly [Name in keyof ServiceSwitches]: ReadonlyArray<ServiceSwitches[Name]> } = {
	idempotencyKeys: ['replayed', 'ignored'],
	callbackSigning: ['signed', 'unsigned'],
	callbackDelivery: ['retried', 'once', 'never'],
	failedJobCallbacks: [true, false],
	reportProgress: [true, false],
	rateLimitHeaders: [true, false],
	retryAfter: [true, false],
	distinctLimitCodes: [true, false],
};

/** The profile's switches, overlaid with those given explicitly (undefined ones left to the profile). */
export function resolveSwitches(name: ServiceProfileName, ...overrides: Array<Partial<ServiceSwitches>>): ServiceSwitches {
	const switches: ServiceSwitches = { ...SERVICE_PROFILES[name] };
	for (const override of overrides) {
		for (const switchName of SERVICE_SWITCH_NAMES) {
			const value = override[switchName];
			if (value !== undefined) (switches as unknown as Record<string, unknown>)[switchName] = value;
		}
	}
	return switches;
}

/** The active profile and every switch as it stands (GET /__sandbox/service, the CLI's banner). */
export interface ServiceReading {
	profile: ServiceProfileName;
	switches: ServiceSwitches;
}

export function serviceReading(config: ServiceSwitches & { service: ServiceProfileName }): ServiceReading {
	const switches = Object.fromEntries(SERVICE_SWITCH_NAMES.map((name) => [name, config[name]])) as unknown as ServiceSwitches;
	return { profile: config.service, switches };
}

/** One line naming the profile and any switch set apart from it. */
export function describeService(config: ServiceSwitches & { service: ServiceProfileName }): string {
	const profile = SERVICE_PROFILES[config.service];
	const changed = SERVICE_SWITCH_NAMES.filter((name) => config[name] !== profile[name]).map((name) => `${name}=${String(config[name])}`);
	return `service ${config.service}${changed.length > 0 ? ` (${changed.join(', ')})` : ''}`;
}
