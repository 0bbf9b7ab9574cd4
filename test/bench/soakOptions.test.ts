import { DEFAULTS, pruningEnv, soakOptions } from '../../bench/soak/options';
import { failureOf, rowOfPrompt, rowsDue, soakRow } from '../../bench/soak/feed';

describe('npm run soak: its flags', () => {
	it('runs three simulated days at 75× on Premium by default, and takes each flag by its kebab-case name', () => {
		expect(soakOptions([])).toEqual(DEFAULTS);
		expect(soakOptions(['--days=0.5', '--speed=60', '--rows-per-day=100', '--from=2.41.1', '--lost-callbacks=0'])).toMatchObject({ days: 0.5, speed: 60, rowsPerDay: 100, from: '2.41.1', lostCallbacks: 0 });
	});

	it('refuses an unknown flag, a number that is none, a share above 1 and a layout it does not run, saying what to pass', () => {
		expect(() => soakOptions(['--dayz=3'])).toThrow(/Unknown flag --dayz=3: the flags are --days, --speed/);
		expect(() => soakOptions(['--speed=fast'])).toThrow('--speed takes a number, not "fast".');
		// n8n's schedule ticks in whole seconds: 5 simulated minutes at 80× would be 3.75 s, and never tick.
		expect(() => soakOptions(['--speed=80'])).toThrow(/ticks every 3.75 s; n8n's schedule takes whole seconds/);
		expect(() => soakOptions(['--unavailable=5'])).toThrow(/shares from 0 to 1/);
		expect(() => soakOptions(['--plan=gold'])).toThrow(/--plan is one of/);
		expect(() => soakOptions(['--layout=one'])).toThrow(/queue mode/);
	});
});

describe('npm run soak: its rows', () => {
	it('feeds rowsPerDay a day evenly and stops at the last day', () => {
		const options = { rowsPerDay: 3500, days: 3 };
		expect(rowsDue(0, options)).toBe(0);
		expect(rowsDue(12 * 3_600_000, options)).toBe(1750);
		expect(rowsDue(10 * 86_400_000, options)).toBe(10_500);
	});

	it('marks one row in 200 against the content policy and one the service fails, and traces a job back to its row', () => {
		const failing = Array.from({ length: 1000 }, (_, i) => failureOf(i + 1)).filter(Boolean);
		expect(failing).toHaveLength(10);
		const row = soakRow('soak x', 37);
		expect(row.prompt).toContain('[sandbox:job-fails-content-policy]');
		expect(rowOfPrompt('soak x', row.prompt)).toBe(37);
		expect(rowOfPrompt('soak y', row.prompt)).toBeUndefined();
	});

	it("prunes n8n's executions by count, a tick's execution each, since n8n counts ages in whole hours of its own clock", () => {
		const env = pruningEnv(DEFAULTS);
		// A day of 5-minute ticks; no age in hours, which n8n would cut to a whole hour, 75 of the sandbox's.
		expect(env).toMatchObject({ EXECUTIONS_DATA_PRUNE: 'true', EXECUTIONS_DATA_PRUNE_MAX_COUNT: '288', EXECUTIONS_DATA_HARD_DELETE_BUFFER: '0' });
		expect(env).not.toHaveProperty('EXECUTIONS_DATA_MAX_AGE');
		expect(Object.values(env).every((value) => !value.includes('.'))).toBe(true);
	});
});
