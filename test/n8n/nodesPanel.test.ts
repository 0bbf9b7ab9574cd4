/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INodePropertyOptions, INodeTypeDescription } from 'n8n-workflow';
import { OmniVideo } from '../../nodes/OmniVideo/OmniVideo.node';
import { OmniVideoTrigger } from '../../nodes/OmniVideoTrigger/OmniVideoTrigger.node';

/**
 * What n8n's nodes panel shows for the package, by the rule its editor applies
 * (packages/frontend/editor-ui, nodeCreator/composables/useActionsGeneration.ts,
 * generateMergedNodesAndActions, the same in 1.123 and 2.41): a trigger whose type name without
 * "Trigger" is the type name of a node with actions is merged into that node, one entry for the app
 * in both panels, and the entry's description is set to the trigger's ("default to trigger
 * description"). n8n 2.41 prints that description under the node's name on the node's page; it
 * read the trigger's sentence there (issue 51, part 4). The browser check in test/e2e/browser.ts
 * reads the real page.
 */
const PACKAGE_NAME = (JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { name: string }).name;

type Entry = { name: string; description: string; actions: string[] };

/** The node's actions as n8n lists them: each resource's operations (resourceCategories). */
function actionsOf(description: INodeTypeDescription): string[] {
	const resources = (description.properties.find((property) => property.name === 'resource')?.options ?? []) as INodePropertyOptions[];
	return resources.flatMap((resource) => {
		const operations = description.properties.find((property) => property.name === 'operation' && (property.displayOptions?.show?.resource ?? []).includes(resource.value));
		return ((operations?.options ?? []) as INodePropertyOptions[]).map((operation) => operation.action ?? `${resource.name} ${operation.name}`);
	});
}

/** The panel's entries, merged as n8n's editor merges them (type names as n8n gives a community package's nodes). */
function panelEntries(descriptions: INodeTypeDescription[]): Entry[] {
	const typeName = (description: INodeTypeDescription) => `${PACKAGE_NAME}.${description.name}`;
	const entries: Entry[] = descriptions
		.filter((description) => !description.group.includes('trigger'))
		.map((description) => ({ name: typeName(description), description: description.description, actions: actionsOf(description) }));
	for (const trigger of descriptions.filter((description) => description.group.includes('trigger'))) {
		const app = entries.find((entry) => entry.name === typeName(trigger).replace('Trigger', ''));
		if (app && app.actions.length > 0) app.description = trigger.description;
		else entries.push({ name: typeName(trigger), description: trigger.description, actions: [] });
	}
	return entries;
}

describe("n8n's nodes panel: the Omni Video entry", () => {
	const node = new OmniVideo().description;
	const trigger = new OmniVideoTrigger().description;
	const entries = panelEntries([node, trigger]);

	it('is one entry for both nodes: the trigger is merged into the node, as n8n does for an app', () => {
		expect(entries.map((entry) => entry.name)).toEqual([`${PACKAGE_NAME}.omniVideo`]);
		expect(entries[0].actions).toEqual(['Upload an image', 'Get a job', 'Generate a video']);
	});

	it("reads the node's own description, which the trigger's description must therefore be", () => {
		expect(entries[0].description).toBe(node.description);
		expect(trigger.description).toBe(node.description);
	});
});
