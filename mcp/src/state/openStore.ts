import { renameSync } from 'node:fs';
import type { Settings } from '../settings';
import { FileStore } from './fileStore';
import { migrateRecords, type LegacyDocuments } from './migrate';
import { RedisStore } from './redisStore';
import { MemoryStore, type StateStore } from './store';

/**
 * The store the settings name: Redis (connected), the folder (made if missing), or memory; an
 * earlier release's documents in the folder or Redis are carried over into records first.
 */
export async function openStore(state: Settings['state'], say: (line: string) => void): Promise<StateStore> {
	if (state.kind === 'memory') return new MemoryStore();
	if (state.kind === 'redis') {
		const store = await RedisStore.open(state.url, say, { cluster: state.cluster });
		await carryOver(store, { names: () => store.legacyDocumentNames(), read: (name) => store.legacyDocument(name), retire: (name) => store.retireLegacyDocument(name) }, say);
		return store;
	}
	const store = new FileStore(state.dir, say, state.prefix);
	await carryOver(
		store,
		{
			names: async () => store.legacyDocumentNames(),
			read: async (name) => store.legacyDocument(name)?.doc,
			retire: async (name) => {
				const found = store.legacyDocument(name);
				if (found) renameSync(found.path, `${found.path}.migrated`);
			},
		},
		say,
	);
	store.startSweeping();
	return store;
}

async function carryOver(store: StateStore, legacy: LegacyDocuments, say: (line: string) => void): Promise<void> {
	const adopted = await migrateRecords(store, legacy, Date.now());
	if (adopted > 0) say(`omni-video-mcp: ${adopted} records of the earlier release carried over into ${store.where}`);
}
