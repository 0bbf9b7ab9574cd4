import { PackageDirectoryLoader } from 'n8n-core';
import type { INodeTypeDescription } from 'n8n-workflow';
import { PACKAGE_DIR } from '../support/n8n/engine';

/**
 * n8n's editor treats a node of the AI category as a sub-node (one that plugs into an agent) unless
 * its AI subcategories name "Root Nodes", and leaves sub-nodes out of the nodes panel's search and
 * the trigger panel. n8n's own OpenAI and Google Gemini nodes list "Agents", "Miscellaneous",
 * "Root Nodes": ours must too, or nobody finds them.
 */
describe('codex: where the editor lists the nodes', () => {
	let descriptions: INodeTypeDescription[];

	beforeAll(async () => {
		const loader = new PackageDirectoryLoader(PACKAGE_DIR);
		await loader.loadAll();
		descriptions = Object.values(loader.nodeTypes).map((loaded) => loaded.type.description as INodeTypeDescription);
	});

	it('loads both nodes with their codex files', () => {
		expect(descriptions.map((description) => description.name).sort()).toEqual(['omniVideo', 'omniVideoTrigger']);
		for (const description of descriptions) expect(description.codex?.categories?.length).toBeGreaterThan(0);
	});

	it('lists each node of the AI category as a root node, so that search finds it', () => {
		for (const description of descriptions) {
			if (!description.codex?.categories?.includes('AI')) continue;
			expect(description.codex.subcategories?.AI).toContain('Root Nodes');
		}
	});

	it('keeps the node among the agents, as n8n\'s OpenAI and Gemini nodes are', () => {
		const node = descriptions.find((description) => description.name === 'omniVideo');
		expect(node?.codex?.subcategories?.AI).toEqual(expect.arrayContaining(['Agents', 'Miscellaneous', 'Root Nodes']));
	});
});
