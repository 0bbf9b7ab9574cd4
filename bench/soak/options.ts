/**
 * The soak's flags (`npm run soak -- --days=3 --speed=75 …`): how long, how fast, which plan and
 * layout, how many rows a day, which n8n to start on and to upgrade to, and the service's faults.
 * Every duration is the sandbox's (simulated) time; the soak converts to real time by the speed.
 */
import { PLANS, type PlanName } from '../../core/types';

export interface SoakOptions {
	/** Simulated days the rows are fed over. */
	days: number;
	/** How much faster than real time the sandbox's clock runs (the node keeps that clock). */
	speed: number;
	plan: PlanName;
	/** Only queue mode today: n8n's layout for a pipeline that runs for days (main, 2 workers, 2 webhook processes, PostgreSQL, Redis). */
	layout: 'queue';
	rowsPerDay: number;
	/** The schedule's tick, in simulated minutes (the template ships with 15; 20 rows a tick at most). */
	tickMinutes: number;
	/** n8n to start on, and the one it is upgraded to half-way (the same: no upgrade). */
	from: string;
	to: string;
	/** Share of callbacks the service loses, and of requests it answers 503. */
	lostCallbacks: number;
	unavailable: number;
	/** n8n's execution pruning: executions older than this many simulated hours go. */
	pruneHours: number;
	/** Where the results go (a JSON, a Markdown table and a chart). */
	out: string;
}

export const DEFAULTS: SoakOptions = {
	days: 3,
	speed: 75,
	plan: 'premium',
	layout: 'queue',
	rowsPerDay: 3500,
	tickMinutes: 5,
	from: '2.40.7',
	to: '2.41.1',
	lostCallbacks: 0.05,
	unavailable: 0.01,
	pruneHours: 24,
	out: 'bench/results',
};

const NUMBERS = ['days', 'speed', 'rowsPerDay', 'tickMinutes', 'lostCallbacks', 'unavailable', 'pruneHours'] as const;
const kebab = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

/** The options from `--name=value` flags; a flag unknown or out of range is refused with what to pass. */
export function soakOptions(argv: string[]): SoakOptions {
	const options: SoakOptions = { ...DEFAULTS };
	for (const arg of argv) {
		const [flag, value = ''] = arg.replace(/^--/, '').split('=');
		const name = (Object.keys(DEFAULTS) as Array<keyof SoakOptions>).find((key) => kebab(key) === flag);
		if (!name) throw new Error(`Unknown flag ${arg}: the flags are ${Object.keys(DEFAULTS).map((key) => `--${kebab(key)}`).join(', ')}.`);
		if ((NUMBERS as readonly string[]).includes(name)) {
			const number = Number(value);
			if (!(number >= 0) || !Number.isFinite(number)) throw new Error(`--${flag} takes a number, not "${value}".`);
			Object.assign(options, { [name]: number });
		} else Object.assign(options, { [name]: value });
	}
	if (!(options.plan in PLANS)) throw new Error(`--plan is one of ${Object.keys(PLANS).join(', ')}, not "${options.plan}".`);
	if (options.layout !== 'queue') throw new Error(`--layout: the soak runs n8n in queue mode (queue), the layout for a pipeline left to run for days; not "${String(options.layout)}".`);
	if (options.lostCallbacks > 1 || options.unavailable > 1) throw new Error('--lost-callbacks and --unavailable are shares from 0 to 1 (0.05 is 5%).');
	if (!(options.speed >= 1) || !(options.days > 0) || !(options.tickMinutes > 0)) throw new Error('--speed is 1 or more; --days and --tick-minutes above 0.');
	// n8n's Schedule Trigger counts whole seconds: a fractional tick never fires.
	const tickSeconds = (options.tickMinutes * 60) / options.speed;
	if (!Number.isInteger(tickSeconds)) throw new Error(`--tick-minutes=${options.tickMinutes} at --speed=${options.speed} ticks every ${tickSeconds} s; n8n's schedule takes whole seconds: pick a speed that divides ${options.tickMinutes * 60} (60 or 75 for 5 minutes).`);
	return options;
}

/**
 * n8n's execution pruning for the soak: the executions of the last `pruneHours` simulated hours kept.
 * n8n counts an age in whole hours of its own clock (Date#setHours), an hour being 75 of the sandbox's
 * at 75×, so the soak keeps them by count instead: one execution a tick. Soft-deleted executions go
 * at n8n's next look (a minute), not after its buffer of hours.
 */
export function pruningEnv(options: SoakOptions): Record<string, string> {
	return {
		EXECUTIONS_DATA_PRUNE: 'true',
		EXECUTIONS_DATA_PRUNE_MAX_COUNT: String(Math.round((options.pruneHours * 60) / options.tickMinutes)),
		EXECUTIONS_DATA_PRUNE_SOFT_DELETE_INTERVAL: '1',
		EXECUTIONS_DATA_PRUNE_HARD_DELETE_INTERVAL: '1',
		EXECUTIONS_DATA_HARD_DELETE_BUFFER: '0',
	};
}
