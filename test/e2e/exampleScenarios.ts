/**
 * The `examples/` workflows as shipped (only the image URL and the callback host adapted), run
 * through n8n's CLI (`n8n execute`) against the running server's database.
 */
import { apiRequestsSince, check, describeRequests, executionWith, executionsOf, outputOf, seconds, sleep, type Context } from './context';
import type { Scenario } from './scenarios';

function example(context: Context, file: string) {
	const found = context.examples.find((entry) => entry.file === file);
	check(found, `example ${file} was not imported`);
	return found;
}

async function execute(context: Context, file: string) {
	const workflow = example(context, file);
	const from = context.sandbox.journal.length;
	const started = Date.now();
	const output = await context.n8n.cli(['execute', `--id=${workflow.id}`]);
	check(/success/i.test(output) && !/error/i.test(output.split('\n').slice(-3).join(' ')), `n8n execute ${file}:\n${output.slice(-1500)}`);
	return { workflow, output, ms: Date.now() - started, requests: () => apiRequestsSince(context.sandbox, from) };
}

export const EXAMPLE_SCENARIOS: Scenario[] = [
	{
		name: 'example-text-to-video',
		async run(context) {
			const { workflow, ms, requests } = await execute(context, 'text-to-video-with-download.json');
			const execution = await executionWith(context, workflow.id, ['success'], 10_000);
			const [item] = outputOf(execution, 'Generate Video');
			const served = Buffer.from(await (await fetch(String(item.json.videoUrl))).arrayBuffer());
			const stored = await context.n8n.binary(item.binary!.video);
			check(stored.equals(served), 'the MP4 in n8n differs from the one the CDN served');
			return `n8n execute: job ${String(item.json.jobId)} done, MP4 ${stored.length} bytes identical to the CDN's; ${describeRequests(requests())}; ${seconds(ms)} (the example waits for 1080P 8 s at full speed)`;
		},
	},
	{
		name: 'example-image-upload-then-image-to-video',
		async run(context) {
			const { workflow, ms, requests } = await execute(context, 'image-upload-then-image-to-video.json');
			const execution = await executionWith(context, workflow.id, ['success'], 10_000);
			const [item] = outputOf(execution, 'Animate Image');
			check(item.json.mode === 'image-to-video' && item.json.status === 'done', `animate: ${JSON.stringify(item.json).slice(0, 200)}`);
			return `n8n execute: job ${String(item.json.jobId)} image-to-video done; ${describeRequests(requests())}; ${seconds(ms)}`;
		},
	},
	{
		name: 'example-generate-with-callback-starts-trigger',
		async run(context) {
			const trigger = example(context, 'job-completed-trigger.json');
			const before = (await executionsOf(context, trigger.id)).map((execution) => execution.id);
			const { workflow, ms } = await execute(context, 'generate-with-callback.json');
			const generated = await executionWith(context, workflow.id, ['success'], 10_000);
			const [job] = outputOf(generated, 'Generate Video');
			const started = await executionWith(context, trigger.id, ['success', 'error'], 60_000, before);
			await sleep(1500);
			const after = (await executionsOf(context, trigger.id)).filter((execution) => !before.includes(execution.id));
			const [item] = outputOf(started, 'Omni Video Trigger');
			check(item.json.jobId === job.json.jobId, `trigger started for ${String(item.json.jobId)}, not ${String(job.json.jobId)}`);
			check(after.length === 1, `${after.length} trigger executions for one callback`);
			check(item.binary?.video, 'the trigger did not download the video');
			return `job ${String(job.json.jobId)} → the active trigger example ran once (confirmed by ${String(item.json.confirmedBy)}, video ${item.binary.video.fileSize ?? '?'}); ${seconds(ms)}`;
		},
	},
];
