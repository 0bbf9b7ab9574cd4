import type { RecordStep } from '../state/recordStep';
import type { StateStore } from '../state/store';
import { metrics, type ServerMetrics, type StoreOperation } from './metrics';
import { PlanPlaces } from './planPlaces';

/**
 * The store as the server uses it, each read and each step timed into the metrics by its name
 * (failed ones too), and the plans' records noted for the places-in-use gauge. Everything else is
 * the store's.
 */
export class MeasuredStore implements StateStore {
	readonly where: string;
	readonly holder: string;

	constructor(
		private readonly inner: StateStore,
		private readonly into: ServerMetrics,
		private readonly noted: (name: string) => void = () => undefined,
	) {
		this.where = inner.where;
		this.holder = inner.holder;
	}

	run<A, R>(step: RecordStep<A, R>, names: string[], args: A, nowMs: number): Promise<R> {
		for (const name of names) this.noted(name);
		return this.timed(step.name, () => this.inner.run(step, names, args, nowMs));
	}

	get<T>(name: string): Promise<T | undefined> {
		this.noted(name);
		return this.timed('read', () => this.inner.get<T>(name));
	}

	alive(holder: string): Promise<boolean> {
		return this.inner.alive(holder);
	}

	ping(): Promise<void> {
		return this.inner.ping();
	}

	private async timed<R>(operation: StoreOperation, step: () => Promise<R>): Promise<R> {
		const started = performance.now();
		let failed = true;
		try {
			const answer = await step();
			failed = false;
			return answer;
		} finally {
			this.into.storeStep(operation, (performance.now() - started) / 1000, failed);
		}
	}
}

/** The store measured into the process's metrics, with the places-in-use gauge read from its plans' records. */
export function measuredStore(inner: StateStore, into: ServerMetrics = metrics): StateStore {
	const places = new PlanPlaces(inner);
	into.placesInUse(() => places.inUse());
	return new MeasuredStore(inner, into, (name) => places.noted(name));
}
