import type { Adapter, AdapterPayload } from 'oidc-provider';
import { list, recordStep } from '../state/recordStep';
import type { StateStore } from '../state/store';

/** A registered client with no expiry of its own is kept this long: one unused for longer registers again. */
const CLIENT_KEEP_MS = 400 * 24 * 3_600_000;

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
		const find = async (id: string): Promise<AdapterPayload | undefined> => {
			const kept = await store.get<Kept>(oauthRecordName(model, id));
			if (!kept) return undefined;
			const payload = JSON.parse(kept.payload) as AdapterPayload;
			return kept.consumedAt === undefined ? payload : { ...payload, consumed: kept.consumedAt };
		};
		return {
			async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
				const nowMs = now();
				const expiresAtMs = expiresIn ? nowMs + expiresIn * 1000 : nowMs + CLIENT_KEEP_MS;
				const name = oauthRecordName(model, id);
				// The grant's list first: a revocation then finds every record that may exist.
				if (payload.grantId)
					await store.run(
						noteGrantRecord,
						[grantRecordName(payload.grantId)],
						{ name, expiresAtMs },
						nowMs,
					);
				if (model === 'Session' && typeof payload.uid === 'string') {
					await store.run(
						keepRecord,
						[uidRecordName(payload.uid)],
						{ kept: { payload: JSON.stringify(id), expiresAtMs } },
						nowMs,
					);
				}
				await store.run(
					keepRecord,
					[name],
					{ kept: { payload: JSON.stringify(payload), expiresAtMs } },
					nowMs,
				);
			},
			find,
			async findByUid(uid: string): Promise<AdapterPayload | undefined> {
				const kept = await store.get<Kept>(uidRecordName(uid));
				return kept ? await find(JSON.parse(kept.payload) as string) : undefined;
			},
			async findByUserCode(): Promise<undefined> {
				// The device flow is off: no user codes are issued.
				return undefined;
			},
			async consume(id: string): Promise<void> {
				await store.run(
					consumeRecord,
					[oauthRecordName(model, id)],
					{ atSeconds: Math.floor(now() / 1000) },
					now(),
				);
			},
			async destroy(id: string): Promise<void> {
				await store.run(removeRecord, [oauthRecordName(model, id)], {}, now());
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
