import type { Settings } from '../settings';
import { FileStore } from '../state/fileStore';
import { RedisStore } from '../state/redisStore';
import { MemoryStore, type StateStore } from '../state/store';

/** The store the settings name: Redis (connected), the folder (made if missing), or memory. */
export async function openStore(state: Settings['state'], say: (line: string) => void): Promise<StateStore> {
	if (state.kind === 'memory') return new MemoryStore();
	if (state.kind === 'redis') return RedisStore.open(state.url, say, { cluster: state.cluster });
	const store = new FileStore(state.dir, say, state.prefix);
	store.startSweeping();
	return store;
}
