/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/**
 * What a newcomer's n8n holds: the Omni Video credentials and the example workflows, imported with
 * n8n's CLI before the server starts (so that the example trigger is active from the start).
 */
import { readFile, readdir, writeFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { N8nServer } from './n8nServer';

export const REPO = resolve(__dirname, '../..');
export const EXAMPLES_DIR = join(REPO, 'examples');
/** The credential the examples use: its name is the one they were exported with. */
export const EXAMPLE_CREDENTIAL = { id: 'omniVideoExample', name: 'Omni Video account' };
export const EXAMPLE_TRIGGER_WEBHOOK = 'omni-video-example';

export interface CredentialToImport {
	id: string;
	name: string;
	data: Record<string, unknown>;
}

export interface ExampleWorkflow {
	id: string;
	file: string;
	name: string;
}

/**
 * Writes the credentials and the examples (credential ids filled in, `rewrite` applied to each
 * node's parameters) and imports them through `n8n import:credentials` and `import:workflow`;
 * the Omni Video Trigger example is activated through the CLI as well.
 */
export async function importCredentialsAndExamples(
	server: N8nServer,
	credentials: CredentialToImport[],
	rewrite: (parameters: Record<string, unknown>) => Record<string, unknown> = (parameters) => parameters,
): Promise<ExampleWorkflow[]> {
	const dir = join(server.userFolder, 'import');
	await mkdir(join(dir, 'workflows'), { recursive: true });
	const credentialFile = join(dir, 'credentials.json');
	await writeFile(credentialFile, JSON.stringify(credentials.map((credential) => ({ ...credential, type: 'omniVideoApi' })), null, 2));
	await server.cli(['import:credentials', `--input=${credentialFile}`]);

	const examples: ExampleWorkflow[] = [];
	for (const file of (await readdir(EXAMPLES_DIR)).filter((name) => name.endsWith('.json')).sort()) {
		const workflow = JSON.parse(await readFile(join(EXAMPLES_DIR, file), 'utf8')) as {
			id?: string;
			name: string;
			active?: boolean;
			nodes: Array<{ parameters: Record<string, unknown>; credentials?: Record<string, { id: string; name: string }> }>;
		};
		const id = `example${String(examples.length + 1).padStart(2, '0')}${file.slice(0, 6).replace(/\W/g, '')}`;
		workflow.id = id;
		workflow.active = false;
		for (const node of workflow.nodes) {
			node.parameters = rewrite(node.parameters);
			if (node.credentials?.omniVideoApi) node.credentials.omniVideoApi = { ...EXAMPLE_CREDENTIAL };
		}
		await writeFile(join(dir, 'workflows', file), JSON.stringify(workflow, null, 2));
		examples.push({ id, file, name: workflow.name });
	}
	await server.cli(['import:workflow', '--separate', `--input=${join(dir, 'workflows')}`]);
	const trigger = examples.find((example) => example.file === 'job-completed-trigger.json');
	if (trigger) {
		// 2.x publishes a workflow version; 1.x sets the active flag. The server activates it on start.
		await server.cli(server.major >= 2 ? ['publish:workflow', `--id=${trigger.id}`] : ['update:workflow', `--id=${trigger.id}`, '--active=true']);
	}
	return examples;
}
