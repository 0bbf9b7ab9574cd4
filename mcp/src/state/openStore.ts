import type { Settings } from '../settings';
import { FileStore } from './fileStore';
import { MemoryStore, type StateStore } from './store';

/** The store the settings name: the folder (made if missing), or memory. */
export function openStore(state: Settings['state'], say: (line: string) => void): StateStore {
	return state.kind === 'memory' ? new MemoryStore() : new FileStore(state.dir, say, state.prefix);
}
