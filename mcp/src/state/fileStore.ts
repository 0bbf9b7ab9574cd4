import { chmodSync, closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { applyStep, type RecordStep } from './recordStep';
import type { StateStore } from './store';
import { processAlive } from './processAlive';

/** A step holds a record's lock for milliseconds: a lock this old belongs to a stopped process. */
const STALE_LOCK_MS = 5_000;
/** Past this, a step gives up waiting for the lock and says so (the call fails, nothing is sent). */
const LOCK_WAIT_MS = 20_000;

/** Expired records are removed this often, off any call's path (a read skips them anyway). */
const SWEEP_MS = 3_600_000;

/**
 * Records in a folder of the user's own (0700, files 0600), shared by every server process on the
 * machine that uses it: each record is a file of its own under records/, changed under its own
 * lock file and written whole to a temporary file renamed over the old one, so a crash leaves the
 * old or the new record, never half, and a step costs the same however many records are kept. A
 * lock whose process is gone (killed while it held it) is taken over at once, one older than a
 * few seconds in any case. A record that cannot be read is set aside with one line on stderr, and
 * the server goes on without it.
 */
export class FileStore implements StateStore {
	readonly where: string;
	/** On one machine a process is its pid. */
	readonly holder = String(process.pid);
	private readonly recordsDir: string;
	private sweeper: NodeJS.Timeout | undefined;

	constructor(
		private readonly dir: string,
		private readonly say: (line: string) => void,
		/** Prefixes the folder's files: the older --state-file setting names its records so. */
		prefix = '',
		private readonly clock: () => number = Date.now,
	) {
		mkdirSync(dir, { recursive: true, mode: 0o700 });
		// The folder holds which jobs were paid for on which key (fingerprints, never keys): the user's alone.
		chmodSync(dir, 0o700);
		this.recordsDir = join(dir, `${prefix}records`);
		mkdirSync(this.recordsDir, { recursive: true, mode: 0o700 });
		this.where = dir;
	}

	/** Removes expired records now and every hour while the process runs. */
	startSweeping(): void {
		this.sweep();
		this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
		this.sweeper.unref();
	}

	stopSweeping(): void {
		clearInterval(this.sweeper);
	}

	async get<T>(name: string): Promise<T | undefined> {
		// A record is replaced by rename, never written in place: it is read whole without the lock.
		return this.load(name, this.clock())?.value as T | undefined;
	}

	async run<A, R>(step: RecordStep<A, R>, names: string[], args: A, nowMs: number): Promise<R> {
		// Locks taken in one order by every process: two steps on the same records never wait on each other.
		const releases: Array<() => void> = [];
		try {
			for (const name of [...new Set(names)].sort()) releases.push(await this.lock(name));
			const values = names.map((name) => this.load(name, nowMs)?.value);
			return applyStep(step, values, args, nowMs, (index, written) => {
				if (written === null) unlinkQuietly(this.file(names[index]));
				else this.save(names[index], written);
			});
		} finally {
			for (const release of releases) release();
		}
	}

	async ping(): Promise<void> {
		// The folder itself must be there to write records in.
		await access(this.recordsDir, constants.R_OK | constants.W_OK | constants.X_OK);
	}

	async alive(holder: string): Promise<boolean> {
		return processAlive(Number(holder));
	}

	private file(name: string): string {
		return join(this.recordsDir, recordFileName(name));
	}

	private load(name: string, nowMs: number): { value: unknown; expiresAtMs: number } | undefined {
		const path = this.file(name);
		let text: string;
		try {
			text = readFileSync(path, 'utf8');
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
			return this.setAside(path, error);
		}
		try {
			const kept = JSON.parse(text) as { value?: unknown; expiresAtMs?: unknown };
			if (kept === null || typeof kept !== 'object' || typeof kept.expiresAtMs !== 'number' || !('value' in kept)) throw new Error('not a record');
			return kept.expiresAtMs > nowMs ? { value: kept.value, expiresAtMs: kept.expiresAtMs } : undefined;
		} catch (error) {
			return this.setAside(path, error);
		}
	}

	/** Kept, not deleted (it may name a paid job), out of the way; the server goes on without it. */
	private setAside(path: string, error: unknown): undefined {
		const aside = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
		try {
			renameSync(path, aside);
			this.say(`omni-video-mcp: ${path} could not be read (${(error as Error).message}); it is kept as ${aside} and the server goes on without that record.`);
		} catch {
			this.say(`omni-video-mcp: ${path} could not be read (${(error as Error).message}); the server goes on without that record.`);
		}
		return undefined;
	}

	private save(name: string, kept: { value: unknown; expiresAtMs: number }): void {
		const path = this.file(name);
		const temporary = `${path}.${process.pid}.tmp`;
		writeFileSync(temporary, JSON.stringify(kept), { mode: 0o600 });
		renameSync(temporary, path);
	}

	private sweep(): void {
		const nowMs = this.clock();
		let files: string[];
		try {
			files = readdirSync(this.recordsDir);
		} catch {
			return;
		}
		for (const file of files) {
			if (!file.endsWith('.json')) continue;
			try {
				const kept = JSON.parse(readFileSync(join(this.recordsDir, file), 'utf8')) as { expiresAtMs?: number };
				if (typeof kept.expiresAtMs === 'number' && kept.expiresAtMs <= nowMs) unlinkQuietly(join(this.recordsDir, file));
			} catch {
				// Being written, or damaged: a read sets it aside.
			}
		}
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

/** A record's file in records/: every character outside a plain name spelled out, so that two names never share a file. */
export function recordFileName(name: string): string {
	return `${name.replace(/[^A-Za-z0-9._-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}.json`;
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
