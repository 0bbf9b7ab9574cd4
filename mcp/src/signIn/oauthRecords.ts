import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { list, recordStep } from '../state/recordStep';
import type { StateStore } from '../state/store';

/** A registered client with no expiry of its own is kept this long after its first grant: one unused for longer registers again. */
const CLIENT_KEEP_MS = 400 * 24 * 3_600_000;
/**
 * A client registered but never granted (no one finished a sign-in with it) is forgotten after a
 * day: registration is open, and an app nobody uses must not stay in the records for a year.
 */
export const UNUSED_CLIENT_MS = 24 * 3_600_000;

/**
 * The models whose id is a bearer secret: a token, a code, a registration token, a session's
 * cookie. oidc-provider names these records by the secret itself (adapter.find(token)); they are
 * kept and found by its SHA-256 instead (the ids are 256 random bits, so a hash is as unguessable),
 * so that whoever reads the Redis or the records folder holds no live token. Grants, clients and
 * interactions are named by ids that are no bearer secret, and stay as they are.
 */
const SECRET_IDS = new Set([
	'AccessToken',
	'AuthorizationCode',
	'RefreshToken',
	'RegistrationAccessToken',
	'InitialAccessToken',
	'ClientCredentials',
	'DeviceCode',
	'BackchannelAuthenticationRequest',
	'PushedAuthorizationRequest',
	'Session',
]);

/** The name a record of this model is kept under: its id, or the id's hash when the id is a secret. */
export function oauthRecordId(model: string, id: string): string {
	return SECRET_IDS.has(model) ? `sha256.${createHash('sha256').update(id).digest('base64url')}` : id;
}

/** The payload as kept: without the secret it is named by (oidc-provider repeats the id as `jti`), or a session's cookie. */
function keptPayload(model: string, payload: AdapterPayload): AdapterPayload {
	if (SECRET_IDS.has(model)) {
		const { jti: _secret, ...rest } = payload;
		return rest;
	}
	// An interaction names its session's cookie (which oidc-provider never reads back): not kept.
	if (model === 'Interaction' && payload.session && typeof payload.session === 'object') {
		const { cookie: _cookie, ...session } = payload.session as Record<string, unknown>;
		return { ...payload, session } as AdapterPayload;
	}
	return payload;
}

/**
 * One OAuth record as kept: the authorization server's payload as JSON text (so that Redis's
 * cjson never rewrites it, turning an empty list into an object), when it expires, and when it
 * was used (a code or refresh token is used once).
 */
interface Kept {
	payload: string;
	expiresAtMs: number;
	consumedAt?: number;
}

export const oauthRecordName = (model: string, id: string) => `oauth:${model}:${id}`;
const uidRecordName = (uid: string) => `oauth:session-uid:${uid}`;
const grantRecordName = (grantId: string) => `oauth:grant:${grantId}`;

const keepRecord = recordStep<{ kept: Kept }, void>(
	'keep oauth record',
	(_values, { kept }) => ({
		writes: [{ value: kept, expiresAtMs: kept.expiresAtMs }],
		answer: undefined,
	}),
	`save(1, args.kept, args.kept.expiresAtMs)
return nil`,
);

const consumeRecord = recordStep<{ atSeconds: number }, void>(
	'consume oauth record',
	([value], { atSeconds }) => {
		const kept = value as Kept | undefined;
		if (!kept || kept.consumedAt !== undefined) return { writes: [undefined], answer: undefined };
		return {
			writes: [{ value: { ...kept, consumedAt: atSeconds }, expiresAtMs: kept.expiresAtMs }],
			answer: undefined,
		};
	},
	`local kept = load(1)
if not kept or kept.consumedAt ~= nil then return nil end
kept.consumedAt = args.atSeconds
save(1, kept, kept.expiresAtMs)
return nil`,
);

/** A client's first grant: it is kept from then on as long as any (see UNUSED_CLIENT_MS). */
const keepClient = recordStep<{ expiresAtMs: number }, void>(
	'keep oauth client',
	([value], { expiresAtMs }) => {
		const kept = value as Kept | undefined;
		if (!kept || kept.expiresAtMs >= expiresAtMs) return { writes: [undefined], answer: undefined };
		return { writes: [{ value: { ...kept, expiresAtMs }, expiresAtMs }], answer: undefined };
	},
	`local kept = load(1)
if not kept or kept.expiresAtMs >= args.expiresAtMs then return nil end
kept.expiresAtMs = args.expiresAtMs
save(1, kept, args.expiresAtMs)
return nil`,
);

const removeRecord = recordStep<Record<string, never>, void>(
	'remove oauth record',
	() => ({ writes: [null], answer: undefined }),
	`redis.call('DEL', KEYS[1])
return nil`,
);

/** Names one more record of a grant (its codes and tokens), kept as long as the longest of them. */
const noteGrantRecord = recordStep<{ name: string; expiresAtMs: number }, void>(
	'note grant record',
	([value], { name, expiresAtMs }) => {
		const grant = value as { names?: unknown; expiresAtMs?: number } | undefined;
		const names = list<string>(grant?.names);
		if (!names.includes(name)) names.push(name);
		const until = Math.max(expiresAtMs, grant?.expiresAtMs ?? 0);
		return {
			writes: [{ value: { names, expiresAtMs: until }, expiresAtMs: until }],
			answer: undefined,
		};
	},
	`local grant = load(1) or {}
local names = grant.names or {}
local found = false
for _, name in ipairs(names) do if name == args.name then found = true end end
if not found then table.insert(names, args.name) end
local untilMs = math.max(args.expiresAtMs, grant.expiresAtMs or 0)
save(1, { names = names, expiresAtMs = untilMs }, untilMs)
return nil`,
);

/**
 * The authorization server's records (clients, codes, grants, tokens, sign-in interactions and
 * sessions) in the server's own store: on one machine its folder, for a team Redis, so that a
 * code minted by one replica is redeemed at another and a token revoked at one is refused by
 * all. Each record is its own, changed by one step; a grant names its codes and tokens in a
 * record of its own, which is how they are all revoked at once.
 */
export function oauthAdapter(
	store: StateStore,
	now: () => number = Date.now,
): (model: string) => Adapter {
	return (model) => {
		const named = (id: string) => oauthRecordName(model, oauthRecordId(model, id));
		const read = async (name: string, jti: string): Promise<AdapterPayload | undefined> => {
			const kept = await store.get<Kept>(name);
			if (!kept) return undefined;
			const payload = JSON.parse(kept.payload) as AdapterPayload;
			// The id a secret record was asked by is its jti again, as oidc-provider expects.
			const whole = SECRET_IDS.has(model) && payload.jti === undefined ? { ...payload, jti } : payload;
			return kept.consumedAt === undefined ? whole : { ...whole, consumed: kept.consumedAt };
		};
		const find = (id: string) => read(named(id), id);
		return {
			async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
				const nowMs = now();
				// A client until its first grant, and its registration token (only for reading the registration back, RFC 7592), a day.
				const forADay = model === 'Client' || model === 'RegistrationAccessToken';
				const expiresAtMs = expiresIn ? nowMs + expiresIn * 1000 : nowMs + (forADay ? UNUSED_CLIENT_MS : CLIENT_KEEP_MS);
				const name = named(id);
				// The grant's list first: a revocation then finds every record that may exist.
				if (payload.grantId)
					await store.run(
						noteGrantRecord,
						[grantRecordName(payload.grantId)],
						{ name, expiresAtMs },
						nowMs,
					);
				if (model === 'Grant' && typeof payload.clientId === 'string')
					await store.run(keepClient, [oauthRecordName('Client', payload.clientId)], { expiresAtMs: nowMs + CLIENT_KEEP_MS }, nowMs);
				if (model === 'Session' && typeof payload.uid === 'string') {
					// The session's record by its name (a hash), never its cookie.
					await store.run(
						keepRecord,
						[uidRecordName(payload.uid)],
						{ kept: { payload: JSON.stringify(name), expiresAtMs } },
						nowMs,
					);
				}
				await store.run(
					keepRecord,
					[name],
					{ kept: { payload: JSON.stringify(keptPayload(model, payload)), expiresAtMs } },
					nowMs,
				);
			},
			find,
			async findByUid(uid: string): Promise<AdapterPayload | undefined> {
				const kept = await store.get<Kept>(uidRecordName(uid));
				if (!kept) return undefined;
				// Named by its hash: its jti (the cookie) is not known here, and only read (interactionDetails, a token's session check).
				const name = JSON.parse(kept.payload) as string;
				return await read(name, name.slice(name.lastIndexOf(':') + 1));
			},
			async findByUserCode(): Promise<undefined> {
				// The device flow is off: no user codes are issued.
				return undefined;
			},
			async consume(id: string): Promise<void> {
				await store.run(
					consumeRecord,
					[named(id)],
					{ atSeconds: Math.floor(now() / 1000) },
					now(),
				);
			},
			async destroy(id: string): Promise<void> {
				await store.run(removeRecord, [named(id)], {}, now());
			},
			async revokeByGrantId(grantId: string): Promise<void> {
				const grant = await store.get<{ names?: unknown }>(grantRecordName(grantId));
				for (const name of list<string>(grant?.names))
					await store.run(removeRecord, [name], {}, now());
				await store.run(removeRecord, [grantRecordName(grantId)], {}, now());
			},
		};
	};
}
