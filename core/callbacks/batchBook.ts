/** Batches this process follows, by a key of the host's (n8n: the execution id). */
export class BatchBook<Progress> {
	private readonly batches = new Map<string, { progress: Progress; openedAtMs: number }>();

	constructor(private readonly keepMs = 26 * 60 * 60 * 1000) {}

	open<Opened extends Progress>(key: string, progress: Opened, nowMs: number): Opened {
		for (const [other, entry] of this.batches) {
			if (nowMs - entry.openedAtMs > this.keepMs) this.batches.delete(other);
		}
		this.batches.set(key, { progress, openedAtMs: nowMs });
		return progress;
	}

	get(key: string): Progress | undefined {
		return this.batches.get(key)?.progress;
	}

	close(key: string): void {
		this.batches.delete(key);
	}
}
