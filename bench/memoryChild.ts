/* eslint-disable no-console, @n8n/community-nodes/no-restricted-globals -- a benchmark's child process, never shipped */
/**
 * One memory measurement, in a process of its own: the n8n node's Get Job with Download Video,
 * through n8n's engine, in the binary data mode given by N8N_DEFAULT_BINARY_DATA_MODE (set by
 * the parent). Prints one JSON line: the RSS before, the peak (the kernel's maxRSS and 5 ms
 * samples) and the bytes stored.
 */
async function main(): Promise<void> {
	const [baseUrl, apiKey, jobId] = process.argv.slice(2);
	// Imported only now: n8n-core reads the binary data mode from the environment on first use.
	const { N8nTestInstance } = await import('../test/support/n8n/instance');
	const { workflowOf, binaryBytes } = await import('../test/support/n8n/engine');
	const { omniVideoNode, outputOf } = await import('../test/support/n8n/workflows');
	const n8n = await N8nTestInstance.start({ omniVideoApi: { apiKey, baseUrl, plan: 'premium', webhookSecret: '' } });
	const workflow = workflowOf([omniVideoNode('Get Job', { resource: 'job', operation: 'get', jobId: 'job_credential_check' })], {});
	// A warm-up run that loads everything the real run needs, so the baseline includes it.
	await (await n8n.execute(workflow, 'Get Job')).finished.catch(() => undefined);
	global.gc?.();
	const before = process.memoryUsage().rss;
	const maxBefore = process.resourceUsage().maxRSS * 1024;
	let sampled = before;
	const sampler = setInterval(() => (sampled = Math.max(sampled, process.memoryUsage().rss)), 5);
	const download = workflowOf([omniVideoNode('Get Job', { resource: 'job', operation: 'get', jobId, download: true })], {});
	const run = await (await n8n.execute(download, 'Get Job')).finished;
	clearInterval(sampler);
	sampled = Math.max(sampled, process.memoryUsage().rss);
	const maxRss = process.resourceUsage().maxRSS * 1024;
	const [item] = outputOf(run, 'Get Job');
	const binary = item.binary?.video;
	if (!binary) throw new Error(`no video in the output: ${JSON.stringify(item.json)}`);
	const stored = (await binaryBytes(binary)).length;
	await n8n.stop();
	console.log(JSON.stringify({ before, maxBefore, maxRss, sampled, stored, storedAs: binary.id ? 'file' : 'base64 in the item' }));
	process.exit(0);
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
