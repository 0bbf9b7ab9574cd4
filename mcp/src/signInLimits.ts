/**
 * How hard sign-in pushes back on guessing and on strangers (OMNI_VIDEO_MCP_SIGN_IN_LIMITS). The
 * defaults make a member code (128 bits) and a key unguessable many times over, and bound what a
 * stranger can make this server ask of the service to `keyChecksInAll` lookups a window.
 */
export interface SignInLimits {
	/** Wrong tries for one member name before each further one locks it (an address gets four times as many). */
	failures: number;
	/** The first lock; each further wrong try doubles it, up to `maxLockMs`. */
	lockMs: number;
	maxLockMs: number;
	/** Counts are kept this long after their last change (failures), or per window (checks, registrations). */
	windowMs: number;
	/** Keys checked with the service per client address, and in all, per window. */
	keyChecks: number;
	keyChecksInAll: number;
	/** Apps registered per client address per window. */
	registrations: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
	failures: 5,
	lockMs: 30_000,
	maxLockMs: 15 * 60_000,
	windowMs: 15 * 60_000,
	keyChecks: 10,
	keyChecksInAll: 300,
	registrations: 20,
};

/** OMNI_VIDEO_MCP_SIGN_IN_LIMITS: `failures=5,lock=30,max-lock=900,window=900,key-checks=10,key-checks-all=300,registrations=20` (seconds, counts), any of them. */
export function signInLimits(text: string | undefined): SignInLimits {
	const limits = { ...DEFAULT_SIGN_IN_LIMITS };
	const fields: Record<string, [keyof SignInLimits, number]> = {
		failures: ['failures', 1],
		lock: ['lockMs', 1000],
		'max-lock': ['maxLockMs', 1000],
		window: ['windowMs', 1000],
		'key-checks': ['keyChecks', 1],
		'key-checks-all': ['keyChecksInAll', 1],
		registrations: ['registrations', 1],
	};
	for (const part of (text ?? '').split(',').map((item) => item.trim()).filter(Boolean)) {
		const [name, value] = part.split('=').map((item) => item.trim());
		const field = fields[name];
		const number = Number(value);
		if (!field || !Number.isFinite(number) || number <= 0)
			throw new Error(`OMNI_VIDEO_MCP_SIGN_IN_LIMITS: "${part}" is not one of ${Object.keys(fields).join(', ')} with a positive number.`);
		limits[field[0]] = number * field[1];
	}
	return limits;
}
