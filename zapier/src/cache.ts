import type { ZObject } from 'zapier-platform-core';

/**
 * Zapier's cache as zapier-platform-core 19.1.0 implements it (src/tools/create-cache.js): `get`
 * and `delete` take a scope like `set` does, though its typings leave it out. An entry written
 * with a scope is found only with that scope, so every use here passes the same one.
 */
interface ScopedCache {
	get(key: string, scope: Scope): Promise<unknown>;
	set(key: string, value: unknown, ttlSeconds: number, scope: Scope, nx?: boolean): Promise<boolean>;
	delete(key: string, scope: Scope): Promise<boolean>;
}

type Scope = Array<'auth' | 'user'>;

/** Entries belong to the connection: another key (another account) never sees them. */
export const CONNECTION_SCOPE: Scope = ['auth'];

export function connectionCache(z: ZObject): ScopedCache {
	return z.cache as unknown as ScopedCache;
}
