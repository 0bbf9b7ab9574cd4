import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A JSON document kept in memory and, when a path is given, on disk: written whole to a temporary
 * file and renamed over the old one, so that a crash leaves the old or the new state, never half.
 * One server process owns the file (two servers on one file would overwrite each other's records).
 */
export class StateFile<T extends object> {
	private value: T;

	constructor(
		private readonly path: string | undefined,
		empty: () => T,
	) {
		this.value = path ? (readJson<T>(path) ?? empty()) : empty();
	}

	get state(): T {
		return this.value;
	}

	/** Changes the state and writes it out at once: a record must survive the process that noted it. */
	update(change: (state: T) => void): void {
		change(this.value);
		if (!this.path) return;
		mkdirSync(dirname(this.path), { recursive: true });
		const temporary = `${this.path}.${process.pid}.tmp`;
		writeFileSync(temporary, JSON.stringify(this.value), { mode: 0o600 });
		renameSync(temporary, this.path);
	}
}

function readJson<T>(path: string): T | undefined {
	let text: string;
	try {
		text = readFileSync(path, 'utf8');
	} catch {
		return undefined;
	}
	// A file that cannot be read as our state is refused rather than overwritten: it holds records of paid jobs.
	try {
		return JSON.parse(text) as T;
	} catch {
		throw new Error(`The state file ${path} is not valid JSON. Move it aside (it may hold records of jobs already made) and start again.`);
	}
}
