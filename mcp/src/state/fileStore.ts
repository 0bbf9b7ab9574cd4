import { chmodSync, closeSync, constants, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { StateStore } from './store';
import { processAlive } from './processAlive';

/** A step holds a document's lock for milliseconds: a lock this old belongs to a stopped process. */
const STALE_LOCK_MS = 5_000;
/** Past this, a step gives up waiting for the lock and says so (the call fails, nothing is sent). */
const LOCK_WAIT_MS = 20_000;

/**
 * Records in a folder of the user's own (0700, files 0600), shared by every server process on the
 * machine that uses it: each document is a JSON file, changed under its own lock file and written
 * whole to a temporary file renamed over the old one, so a crash leaves the old or the new
 * document, never half. A lock whose process is gone (killed while it held it) is taken over at
 * once, one older than a few seconds in any case. A document that cannot be read is set aside
 * with one line on stderr, and the server goes on with an empty one.
 */
export class FileStore implements StateStore {
	readonly where: string;
	/** On one machine a process is its pid. */
	readonly holder = String(process.pid);

	constructor(
		private readonly dir: string,
		private readonly say: (line: string) => void,
		/** Prefixes every file's name: the older --state-file setting names its records so. */
		private readonly prefix = '',
	) {
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		// The folder holds which jobs were paid for on which key (fingerprints, never keys): the user's alone.
		chmodSync(dir, 0o700);
		this.where = dir;
	}

	async transact<T extends object, R>(name: string, empty: () => T, change: (doc: T) => R): Promise<R> {
		const release = await this.lock(name);
		try {
			const doc = this.load(name, empty);
			const answer = change(doc);
			this.save(name, doc);
			return answer;
		} finally {
			release();
		}
	}

	async alive(holder: string): Promise<boolean> {
		return processAlive(Number(holder));
	}

	async ping(): Promise<void> {
		// A read never fails here (a missing document reads as empty): the folder itself must be there to write in.
		await access(this.dir, constants.R_OK | constants.W_OK | constants.X_OK);
	}

	async read<T extends object>(name: string, empty: () => T): Promise<T> {
		// A document is replaced by rename, never written in place: it is read whole without the lock.
		return this.load(name, empty);
	}

	private file(name: string): string {
		return join(this.dir, `${this.prefix}${name.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
	}

	private load<T extends object>(name: string, empty: () => T): T {
		const path = this.file(name);
		let text: string;
		try {
			text = readFileSync(path, 'utf8');
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === 'ENOENT') return empty();
			return this.setAside(path, error, empty);
		}
		try {
			const doc = JSON.parse(text) as unknown;
			if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not a JSON object');
			return doc as T;
		} catch (error) {
			return this.setAside(path, error, empty);
		}
	}

	/** Kept, not deleted (it may name paid jobs), out of the way; the server goes on without it. */
	private setAside<T>(path: string, error: unknown, empty: () => T): T {
		const aside = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
		try {
			renameSync(path, aside);
			this.say(`omni-video-mcp: ${path} could not be read (${(error as Error).message}); it is kept as ${aside} and the server goes on without its records.`);
		} catch {
			this.say(`omni-video-mcp: ${path} could not be read (${(error as Error).message}); the server goes on without its records.`);
		}
		return empty();
	}

	private save(name: string, doc: object): void {
		const path = this.file(name);
		const temporary = `${path}.${process.pid}.tmp`;
		writeFileSync(temporary, JSON.stringify(doc), { mode: 0o600 });
		renameSync(temporary, path);
	}

	private async lock(name: string): Promise<() => void> {
		const path = `${this.file(name)}.lock`;
		const started = Date.now();
		for (let attempt = 0; ; attempt++) {
			try {
				const fd = openSync(path, 'wx', 0o600);
				writeFileSync(fd, `${process.pid} ${Date.now()}`);
				closeSync(fd);
				return () => unlinkQuietly(path);
			} catch (error) {
				if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
			}
			if (takeOverIfStale(path)) continue;
			if (Date.now() - started > LOCK_WAIT_MS) {
				throw new Error(`The server's records at ${this.dir} stayed locked for ${LOCK_WAIT_MS / 1000} s by another omni-video-mcp process; nothing was sent. Try again; if it persists, delete ${path}.`);
			}
			await new Promise((resolve) => setTimeout(resolve, Math.min(25, 2 + attempt)));
		}
	}
}

/**
 * A lock left by a process that is gone, or older than any step takes: moved aside under a name of
 * our own (one process wins the rename) and removed. The one race left, a live lock made between
 * our read and our rename, is put back when what we moved is not what we judged stale.
 */
function takeOverIfStale(path: string): boolean {
	let text: string;
	let ageMs: number;
	try {
		text = readFileSync(path, 'utf8');
		ageMs = Date.now() - statSync(path).mtimeMs;
	} catch {
		return true;
	}
	const pid = Number(text.split(' ')[0]);
	if (!(ageMs > STALE_LOCK_MS || (pid > 0 && !processAlive(pid)))) return false;
	const aside = `${path}.stale-${process.pid}-${Date.now()}`;
	try {
		renameSync(path, aside);
	} catch {
		return true;
	}
	if (readFileSync(aside, 'utf8') !== text) {
		try {
			renameSync(aside, path);
		} catch {
			// The live owner's lock is gone: its step ends unaffected, the next waits on a new one.
		}
		return true;
	}
	unlinkQuietly(aside);
	return true;
}

function unlinkQuietly(path: string): void {
	try {
		unlinkSync(path);
	} catch {
		// Taken over already.
	}
}
