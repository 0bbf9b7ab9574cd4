import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { list, recordStep, type Written } from '../state/recordStep';
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

/**
 * Every OAuth record's name carries one hash tag, `{oauth}`, so that on a Redis Cluster they all
 * live on one slot: a record, its grant's index and its session's uid record are written by one
 * step, and a grant is revoked with all its records by one step, which a cluster runs only on keys
 * of one slot. A token cannot carry its grant's id in its tag (it is found by its id alone), so the
 * tag is the same for all of them; sign-in's traffic (a sign-in, an hourly refresh per member) is
 * small enough for one node.
 */
export const oauthRecordName = (model: string, id: string) => `oauth:{oauth}:${model}:${id}`;
const uidRecordName = (uid: string) => `oauth:{oauth}:session-uid:${uid}`;
/** Not `grant:`, which a case-insensitive folder (macOS) would take for the Grant model's own record of the same id. */
const grantRecordName = (grantId: string) => `oauth:{oauth}:grant-index:${grantId}`;

/** A grant's index: the names of its records (codes, tokens, …), kept as long as the longest of them. */
interface GrantIndex {
	names?: unknown;
	expiresAtMs: number;
}

/**
 * What one upsert writes besides the record (its first name), each on the next name given when
 * set: the record's name listed in its grant's index, the grant's client kept at least until
 * `clientUntilMs` (a client's first grant: see UNUSED_CLIENT_MS), a session's uid record.
 */
interface KeepArgs {
	kept: Kept;
	grantLists?: string;
	clientUntilMs?: number;
	uidKept?: Kept;
}

/** A record with its grant's index, its grant's client and its session's uid record, in one step, as oidc-provider's own Redis adapter writes them in one MULTI. */
const keepRecord = recordStep<KeepArgs, void>(
	'keep oauth record',
	(values, { kept, grantLists, clientUntilMs, uidKept }) => {
		const writes: Written[] = [{ value: kept, expiresAtMs: kept.expiresAtMs }];
		let at = 1;
		if (grantLists !== undefined) {
			const index = values[at++] as GrantIndex | undefined;
			const names = list<string>(index?.names);
			if (!names.includes(grantLists)) names.push(grantLists);
			const until = Math.max(kept.expiresAtMs, index?.expiresAtMs ?? 0);
			writes.push({ value: { names, expiresAtMs: until }, expiresAtMs: until });
		}
		if (clientUntilMs !== undefined) {
			const client = values[at++] as Kept | undefined;
			writes.push(!client || client.expiresAtMs >= clientUntilMs ? undefined : { value: { ...client, expiresAtMs: clientUntilMs }, expiresAtMs: clientUntilMs });
		}
		if (uidKept !== undefined) writes.push({ value: uidKept, expiresAtMs: uidKept.expiresAtMs });
		return { writes, answer: undefined };
	},
	`save(1, args.kept, args.kept.expiresAtMs)
local at = 2
if args.grantLists ~= nil then
	local index = load(at) or {}
	local names = index.names or {}
	local found = false
	for _, name in ipairs(names) do if name == args.grantLists then found = true end end
	if not found then table.insert(names, args.grantLists) end
	local untilMs = math.max(args.kept.expiresAtMs, index.expiresAtMs or 0)
	save(at, { names = names, expiresAtMs = untilMs }, untilMs)
	at = at + 1
end
if args.clientUntilMs ~= nil then
	local client = load(at)
	if client and client.expiresAtMs < args.clientUntilMs then
		client.expiresAtMs = args.clientUntilMs
		save(at, client, args.clientUntilMs)
	end
	at = at + 1
end
if args.uidKept ~= nil then save(at, args.uidKept, args.uidKept.expiresAtMs) end
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

const removeRecord = recordStep<Record<string, never>, void>(
	'remove oauth record',
	() => ({ writes: [null], answer: undefined }),
	`redis.call('DEL', KEYS[1])
return nil`,
);

/**
 * A grant revoked: its index (the first name) and the records given after it (`given`, their
 * names) removed together. A name the index holds that was not given (a token written since the
 * index was read) is answered, and the index is kept listing only those, so that nothing of the
 * grant is left unlisted: the adapter revokes them the same way. Undefined: nothing is left.
 */
const revokeGrant = recordStep<{ given: string[] }, string[] | undefined>(
	'revoke oauth grant',
	(values, { given }) => {
		const index = values[0] as GrantIndex | undefined;
		const left = list<string>(index?.names).filter((name) => !given.includes(name));
		const removed: Written[] = given.map(() => null);
		if (!index || left.length === 0) return { writes: [null, ...removed], answer: undefined };
		return { writes: [{ value: { names: left, expiresAtMs: index.expiresAtMs }, expiresAtMs: index.expiresAtMs }, ...removed], answer: left };
	},
	`local index = load(1)
local given = {}
for _, name in ipairs(args.given) do given[name] = true end
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
local left = {}
if index then
	for _, name in ipairs(index.names or {}) do if not given[name] then table.insert(left, name) end end
end
if #left == 0 then
	redis.call('DEL', KEYS[1])
	return nil
end
save(1, { names = left, expiresAtMs = index.expiresAtMs }, index.expiresAtMs)
return answer(left)`,
);

/**
 * The authorization server's records (clients, codes, grants, tokens, sign-in interactions and
 * sessions) in the server's own store: on one machine its folder, for a team Redis, so that a
 * code minted by one replica is redeemed at another and a token revoked at one is refused by
 * all. Each record is its own; an upsert writes it with what goes with it (its grant's index,
 * a grant's client, a session's uid record) in one step, and a grant's index names its codes and
 * tokens, which one step then revokes with it.
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
				// The record, and with it in the same step (names in this order): its grant's index, a grant's client, a session's uid record.
				const names = [name];
				const args: KeepArgs = { kept: { payload: JSON.stringify(keptPayload(model, payload)), expiresAtMs } };
				if (payload.grantId) {
					names.push(grantRecordName(payload.grantId));
					args.grantLists = name;
				}
				if (model === 'Grant' && typeof payload.clientId === 'string') {
					names.push(oauthRecordName('Client', payload.clientId));
					args.clientUntilMs = nowMs + CLIENT_KEEP_MS;
				}
				if (model === 'Session' && typeof payload.uid === 'string') {
					names.push(uidRecordName(payload.uid));
					// The session's record by its name (a hash), never its cookie.
					args.uidKept = { payload: JSON.stringify(name), expiresAtMs };
				}
				await store.run(keepRecord, names, args, nowMs);
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
				const index = grantRecordName(grantId);
				// The index and every record it names, in one step; a record written since the index was read is answered and revoked the same way.
				let names = list<string>((await store.get<GrantIndex>(index))?.names);
				for (;;) {
					const given = [...new Set(names)];
					const left = await store.run(revokeGrant, [index, ...given], { given }, now());
					names = list<string>(left);
					if (names.length === 0) return;
				}
			},
		};
	};
}
