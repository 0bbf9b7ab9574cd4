/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals -- the sandbox's command line prints for a person and reads process arguments; never shipped */
import { startSandbox, type SandboxOptions } from './server';
import { DEFAULT_CONFIG, keysByRole } from './config';
import { isFraction } from './faultRates';
import type { RenderTimeModel } from './renderTimes';
import { describeService, parseSwitch, serviceProfileName } from './service';

const HELP = `Omni Video sandbox: a local, faithful Omni Video API.

Usage: npm run sandbox -- [options]
  --port N               port on 127.0.0.1 (default 4010; 0 picks a free one)
  --speed N              virtual time runs N times faster (default 1)
  --client-clock sandbox clients keep the sandbox's clock (GET /__sandbox/clock says so; the
                         n8n node follows it): Retry-After and signatures in virtual time
  --seed N               seed of the drawn render times (default 1)
  --render-spread S      spread of render times around the typical one (default 0.25; 0 = none)
  --render-uniform       render times drawn evenly across 30–90 s, whatever the job's size
  --service NAME         which reading of the spec's open points: default (docs/api.md's
                         decisions) or spec (the strictest: keys ignored, callbacks unsigned,
                         sent once, none for failed jobs, no progress, no X-RateLimit-*, 429
                         without Retry-After or which limit); OMNI_SANDBOX_SERVICE sets it too
  --switch NAME=VALUE    one switch over the profile, e.g. --switch idempotencyKeys=replayed
                         (sandbox/README.md lists them); repeatable
  --no-progress          job records carry no progress (the same as --switch reportProgress=false)
  --insecure-callbacks   accept http:// callback URLs to loopback addresses
  --lose-callbacks R     lose this share (0..1) of jobs' callback deliveries, drawn at random
  --unavailable R        answer this share (0..1) of API requests 503, drawn at random
  --fault-seed N         seed of those draws (default 1)
  --config FILE          JSON config: accounts, keys, budgets, prices, limits (see sandbox/README.md)
  --help                 this text`;

function clientClockOf(value: string): 'real' | 'sandbox' {
	if (value !== 'real' && value !== 'sandbox') throw new Error(`--client-clock is real or sandbox, not ${value}`);
	return value;
}

function fractionOf(flag: string, value: string): number {
	const fraction = value.trim() === '' ? Number.NaN : Number(value);
	if (!isFraction(fraction)) throw new Error(`${flag} is a fraction from 0 to 1 (0.05 is 5 %), not ${value}`);
	return fraction;
}

const percent = (rate = 0) => `${Math.round(rate * 10_000) / 100} %`;

function parseArgs(argv: string[]): SandboxOptions | 'help' {
	const options: SandboxOptions = {};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => {
			const next = argv[++i];
			if (next === undefined) throw new Error(`${arg} needs a value`);
			return next;
		};
		if (arg === '--help' || arg === '-h') return 'help';
		else if (arg === '--port') options.port = Number(value());
		else if (arg === '--speed') options.speed = Number(value());
		else if (arg === '--client-clock') options.clientClock = clientClockOf(value());
		else if (arg === '--seed') options.renderTimes = { ...renderTimes(options), seed: Number(value()) };
		else if (arg === '--render-spread') options.renderTimes = { ...renderTimes(options), spread: Number(value()) };
		else if (arg === '--render-uniform') options.renderTimes = { ...renderTimes(options), shape: 'uniform' };
		else if (arg === '--no-progress') options.reportProgress = false;
		else if (arg === '--service') options.service = serviceProfileName(value(), '--service');
		else if (arg === '--switch') Object.assign(options, parseSwitch(value()));
		else if (arg === '--insecure-callbacks') options.insecureCallbacks = true;
		else if (arg === '--lose-callbacks') options.faultRates = { ...options.faultRates, lostCallbacks: fractionOf(arg, value()) };
		else if (arg === '--unavailable') options.faultRates = { ...options.faultRates, unavailable: fractionOf(arg, value()) };
		else if (arg === '--fault-seed') options.faultRates = { ...options.faultRates, seed: Number(value()) };
		else if (arg === '--config') options.configFile = value();
		else throw new Error(`Unknown option ${arg} (see --help)`);
	}
	return options;
}

function renderTimes(options: SandboxOptions): RenderTimeModel {
	return options.renderTimes ?? DEFAULT_CONFIG.renderTimes;
}

async function main(): Promise<void> {
	const options = parseArgs(process.argv.slice(2));
	if (options === 'help') {
		console.log(HELP);
		return;
	}
	const sandbox = await startSandbox(options);
	const { url, webhookSecret, config } = sandbox;
	const keys = keysByRole(config);
	const budget = config.keys.find((key) => key.key === keys.budget)?.budget;
	const lines = [
		keys.pro && `  Pro key:        ${keys.pro}`,
		keys.premium && `  Premium key:    ${keys.premium}`,
		keys.budget && `  Budget key:     ${keys.budget}   (${budget}-credit budget)`,
		keys.revoked && `  Revoked key:    ${keys.revoked}`,
		`  Webhook secret: ${webhookSecret}`,
		config.faultRates &&
			`  Drawn faults:   ${percent(config.faultRates.lostCallbacks)} of callbacks lost, ${percent(config.faultRates.unavailable)} of API requests 503 (seed ${config.faultRates.seed ?? 1})`,
		`  Admin:          ${url}/__sandbox/requests · /jobs · /callbacks · /scenarios · /clock · /service · /faults`,
	];
	const tryKey = keys.pro ?? keys.premium ?? config.keys[0]?.key ?? '<key>';
	console.log(`Omni Video sandbox listening on ${url}  (${describeService(config)}, speed ×${config.speed}${config.insecureCallbacks ? ', insecure callbacks allowed' : ''})

${lines.filter(Boolean).join('\n')}

Try:
  curl -s -X POST ${url}/api/v1/generate -H 'Authorization: Bearer ${tryKey}' -H 'Content-Type: application/json' -d '{"model":"omni-video","prompt":"A red fox in the snow"}'
`);
	const stop = () => {
		void sandbox.close().then(() => process.exit(0));
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
	console.error((error as Error).message);
	process.exit(1);
});
