/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PackageDirectoryLoader } from 'n8n-core';
import type { INodeTypeDescription } from 'n8n-workflow';
import { PACKAGE_DIR } from '../support/n8n/engine';

/**
 * The codex rules in n8n's repository that the released linter (@n8n/node-cli 0.48's
 * @n8n/eslint-plugin-community-nodes 0.32) does not have yet, checked here until it does:
 *
 * - valid-node-categories (packages/@n8n/eslint-plugin-community-nodes/src/rules/valid-node-categories.ts):
 *   `categories`, when given, is a non-empty array of strings from n8n's list, which is
 *   CODEX_NODE_CATEGORIES in packages/@n8n/constants/src/node-categories.ts ("Marketing" is
 *   refused by name: the category is "Marketing & Content"); `subcategories.AI` needs the AI
 *   category and the AI category needs a `subcategories.AI`.
 * - no-ai-codex-category and no-codex-subcategories (same folder, src/utils/codex-utils.ts): no "AI"
 *   category and no `subcategories` at all unless the node's .node.ts imports @n8n/ai-node-sdk.
 *   The editor reads "AI" and the subcategories to decide whether search lists the node, so a
 *   node without the SDK that claims them can vanish from the nodes panel without any error.
 * - no-logic-or-flow-nodes: no "Logic" or "Flow" in categories or subcategories.
 *
 * The .node.json is only what n8n reads while the .node.ts has no inline `codex` (n8n's loader
 * then ignores the file, and so do the rules): the test holds that too.
 */
const N8N_CODEX_CATEGORIES = [
	'Data & Storage',
	'Finance & Accounting',
	'Marketing & Content',
	'Productivity',
	'Miscellaneous',
	'Sales',
	'Development',
	'Analytics',
	'Communication',
	'Utility',
	'AI',
];
const AI_NODE_SDK = ['@n8n/ai-node-sdk', 'ai-node-sdk'];

type Codex = Record<string, unknown>;

/** What n8n's unreleased codex rules would report for one codex file, given whether its node imports the AI SDK. */
function codexProblems(codex: Codex, usesAiNodeSdk: boolean): string[] {
	const problems: string[] = [];
	const { categories, subcategories } = codex;
	const names = Array.isArray(categories) ? categories : [];
	if (categories !== undefined && (!Array.isArray(categories) || categories.length === 0)) problems.push('categories is not a non-empty array');
	for (const category of names) {
		if (typeof category !== 'string') problems.push(`category ${JSON.stringify(category)} is not a string`);
		else if (category === 'Marketing') problems.push('"Marketing" is not a category: "Marketing & Content" is');
		else if (!N8N_CODEX_CATEGORIES.includes(category)) problems.push(`"${category}" is not one of n8n's categories`);
	}
	if (!usesAiNodeSdk && names.includes('AI')) problems.push('the "AI" category without @n8n/ai-node-sdk');
	if (!usesAiNodeSdk && subcategories !== undefined) problems.push('subcategories without @n8n/ai-node-sdk');
	const grouped = subcategories && typeof subcategories === 'object' ? (subcategories as Record<string, unknown>) : {};
	if (names.includes('AI') && !(Array.isArray(grouped.AI) && grouped.AI.length > 0)) problems.push('the "AI" category without subcategories.AI');
	if (grouped.AI !== undefined && !names.includes('AI')) problems.push('subcategories.AI without the "AI" category');
	const subValues = Object.values(grouped).flatMap((values) => (Array.isArray(values) ? values : []));
	for (const value of [...names, ...Object.keys(grouped), ...subValues]) {
		if (value === 'Logic' || value === 'Flow') problems.push(`"${value}": community nodes may not be Logic or Flow nodes`);
	}
	return problems;
}

/** Every node folder's codex file, beside the .node.ts it describes, as n8n's rules find them. */
function codexFiles(): Array<{ file: string; codex: Codex; nodeSource: string }> {
	const nodesDir = join(PACKAGE_DIR, 'nodes');
	return readdirSync(nodesDir, { withFileTypes: true })
		.filter((entry) => entry.isDirectory())
		.flatMap((entry) =>
			readdirSync(join(nodesDir, entry.name))
				.filter((name) => name.endsWith('.node.json'))
				.map((name) => {
					const file = join(nodesDir, entry.name, name);
					const sourceFile = file.replace(/\.node\.json$/, '.node.ts');
					return {
						file: `nodes/${entry.name}/${name}`,
						codex: JSON.parse(readFileSync(file, 'utf8')) as Codex,
						nodeSource: existsSync(sourceFile) ? readFileSync(sourceFile, 'utf8') : '',
					};
				}),
		);
}

function importsAiNodeSdk(source: string): boolean {
	return AI_NODE_SDK.some((name) => source.includes(`'${name}'`) || source.includes(`"${name}"`));
}

describe('codex: n8n\'s newer community-node rules, ahead of the released linter', () => {
	let descriptions: INodeTypeDescription[];

	beforeAll(async () => {
		const loader = new PackageDirectoryLoader(PACKAGE_DIR);
		await loader.loadAll();
		descriptions = Object.values(loader.nodeTypes).map((loaded) => loaded.type.description as INodeTypeDescription);
	});

	it('finds a codex file for each node', () => {
		expect(codexFiles().map(({ file }) => file).sort()).toEqual([
			'nodes/OmniVideo/OmniVideo.node.json',
			'nodes/OmniVideoTrigger/OmniVideoTrigger.node.json',
		]);
	});

	it.each(codexFiles().map((entry) => [entry.file, entry] as const))('%s uses only n8n\'s categories, no AI category, no subcategories', (_file, { codex, nodeSource }) => {
		expect(codex.categories).toEqual(expect.arrayContaining([expect.any(String)]));
		expect(codexProblems(codex, importsAiNodeSdk(nodeSource))).toEqual([]);
		// The node does not use the AI node SDK: were it to, the AI category would be allowed and this file must say so.
		expect(importsAiNodeSdk(nodeSource)).toBe(false);
		// An inline codex would make n8n (and its rules) ignore this file.
		expect(nodeSource).not.toMatch(/\bcodex\s*:/);
	});

	it('n8n loads the categories from the codex files, and nothing from the AI taxonomy', () => {
		expect(descriptions.map((description) => description.name).sort()).toEqual(['omniVideo', 'omniVideoTrigger']);
		for (const description of descriptions) {
			expect(description.codex?.categories).toEqual(['Marketing & Content']);
			expect(description.codex?.subcategories).toBeUndefined();
		}
	});

	it('the check refuses what n8n\'s rules refuse', () => {
		// The codex files as they were before n8n's newer rules: AI, Marketing and AI subcategories.
		const before = { categories: ['AI', 'Marketing'], subcategories: { AI: ['Agents', 'Miscellaneous', 'Root Nodes'] } };
		expect(codexProblems(before, false)).toEqual([
			'"Marketing" is not a category: "Marketing & Content" is',
			'the "AI" category without @n8n/ai-node-sdk',
			'subcategories without @n8n/ai-node-sdk',
		]);
		// With the SDK, AI and its subcategories are allowed; Marketing is still not a category.
		expect(codexProblems(before, true)).toEqual(['"Marketing" is not a category: "Marketing & Content" is']);
		expect(codexProblems({ categories: ['AI'] }, true)).toEqual(['the "AI" category without subcategories.AI']);
		expect(codexProblems({ categories: [] }, false)).toEqual(['categories is not a non-empty array']);
		expect(codexProblems({ categories: ['Core Nodes', 'Utility'] }, false)).toEqual(['"Core Nodes" is not one of n8n\'s categories']);
		expect(codexProblems({ categories: ['Utility'], subcategories: { Utility: ['Flow'] } }, false)).toEqual([
			'subcategories without @n8n/ai-node-sdk',
			'"Flow": community nodes may not be Logic or Flow nodes',
		]);
		expect(codexProblems({}, false)).toEqual([]);
	});
});
