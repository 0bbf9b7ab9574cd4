/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { NodeHelpers, type INode, type INodeParameters } from 'n8n-workflow';
import { PACKAGE_NAME, loadPackage, type LoadedPackage } from '../support/n8n/engine';

const DIR = join(__dirname, '../../examples');
const files = readdirSync(DIR).filter((file) => file.endsWith('.json'));

let pkg: LoadedPackage;
beforeAll(async () => {
	pkg = await loadPackage();
});

describe.each(files)('example %s', (file) => {
	const workflow = JSON.parse(readFileSync(join(DIR, file), 'utf8')) as { nodes: INode[]; connections: Record<string, unknown> };
	const ours = workflow.nodes.filter((node) => node.type.startsWith(`${PACKAGE_NAME}.`));

	it('uses our nodes with parameters they have, nothing required missing, and no secrets', () => {
		expect(ours.length).toBeGreaterThan(0);
		for (const node of ours) {
			const type = pkg.nodeTypes.getByNameAndVersion(node.type, node.typeVersion);
			const resolved = NodeHelpers.getNodeParameters(type.description.properties, node.parameters, true, false, node, type.description) as INodeParameters;
			// A parameter n8n does not know for these settings would be dropped silently on import.
			for (const name of Object.keys(node.parameters)) expect(Object.keys(resolved)).toContain(name);
			const issues = NodeHelpers.getNodeParametersIssues(type.description.properties, node, type.description);
			expect(issues?.parameters ?? {}).toEqual({});
			expect(node.credentials?.omniVideoApi?.name).toBe('Omni Video account');
		}
		expect(JSON.stringify(workflow)).not.toMatch(/omni_test_|whsec_|Bearer /);
	});

	it('connects every node it names', () => {
		const names = new Set(workflow.nodes.map((node) => node.name));
		for (const [from, outputs] of Object.entries(workflow.connections)) {
			expect(names).toContain(from);
			for (const targets of (outputs as { main: Array<Array<{ node: string }>> }).main) for (const target of targets) expect(names).toContain(target.node);
		}
	});
});
