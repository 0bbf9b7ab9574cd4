import type { INodeProperties, INodePropertyOptions, INodeTypeDescription } from 'n8n-workflow';
import { startSandbox, type Sandbox } from '../../sandbox';
import { OmniVideoApi } from '../../credentials/OmniVideoApi.credentials';
import { OmniVideo } from '../../nodes/OmniVideo/OmniVideo.node';
import { OmniVideoTrigger } from '../../nodes/OmniVideoTrigger/OmniVideoTrigger.node';
import { N8nTestInstance } from '../support/n8n/instance';
import { workflowOf } from '../support/n8n/engine';
import { itemsOf, omniVideoNode, outputOf } from '../support/n8n/workflows';

/**
 * n8n's community-node rules in its repository (packages/@n8n/eslint-plugin-community-nodes/src/rules),
 * not in the released linter yet, that read a node's description or its execute(). The rules read
 * the .node.ts source, so they miss the fields our action files add; this reads every field, as
 * n8n loads them. The codex rules are in codex.test.ts.
 */
const FORMS: Array<[string, INodeProperties[]]> = [
	['Omni Video', new OmniVideo().description.properties],
	['Omni Video Trigger', new OmniVideoTrigger().description.properties],
	['Omni Video API credential', new OmniVideoApi().properties],
];

type Field = { where: string; field: INodeProperties };

/** Every field, those inside collections and fixed collections too. */
function fieldsOf(where: string, properties: readonly INodeProperties[]): Field[] {
	return properties.flatMap((field) => {
		const here = `${where} → ${field.name}`;
		const nested = ((field.options ?? []) as unknown[]).flatMap((option) => {
			const entry = option as Partial<INodeProperties> & { values?: INodeProperties[] };
			if (entry.type !== undefined) return fieldsOf(here, [entry as INodeProperties]);
			return Array.isArray(entry.values) ? fieldsOf(`${here} → ${String(entry.name)}`, entry.values) : [];
		});
		return [{ where: here, field }, ...nested];
	});
}

const FIELDS = FORMS.flatMap(([where, properties]) => fieldsOf(where, properties));
const CHOICES = FIELDS.filter(({ field }) => field.type === 'options' || field.type === 'multiOptions').map(({ where, field }) => ({
	where,
	names: (field.options as INodePropertyOptions[]).map((option) => option.name),
	values: (field.options as INodePropertyOptions[]).map((option) => option.value),
}));

/** Lists in an order of size or tier, not of name: the rule, which reads literal lists in .node.ts files only, does not reach them. */
const ORDERED_BY_SIZE: Record<string, string[]> = {
	'Omni Video → resolution': ['720P', '1080P', '4K'],
	'Omni Video API credential → plan': ['Pro (30/min, 200/hour, 5 Jobs at Once)', 'Premium (60/min, 500/hour, 10 Jobs at Once)', 'Custom Limits'],
};

describe("the node's fields meet n8n's newer rules", () => {
	it('reads every field, nested ones too', () => {
		expect(FIELDS.length).toBeGreaterThan(25);
		expect(FIELDS.map(({ where }) => where)).toContain('Omni Video → options → reuseHours');
	});

	it('require-param-default: every field has a default; no field says required: false', () => {
		expect(FIELDS.filter(({ field }) => field.default === undefined).map(({ where }) => where)).toEqual([]);
		expect(FIELDS.filter(({ field }) => field.required === false).map(({ where }) => where)).toEqual([]);
	});

	it('hint-max-length: a hint is at most 120 characters (a longer text is the description or the docs)', () => {
		const long = FIELDS.filter(({ field }) => (field.hint ?? '').length > 120).map(({ where, field }) => `${where}: ${field.hint!.length}`);
		expect(long).toEqual([]);
	});

	it('no-duplicate-param-options and no-asterisk-in-option-names', () => {
		expect(CHOICES.length).toBeGreaterThan(5);
		for (const { where, names, values } of CHOICES) {
			expect({ where, names: new Set(names).size, values: new Set(values).size }).toEqual({ where, names: names.length, values: values.length });
			expect({ where, asterisk: names.filter((name) => name.includes('*')) }).toEqual({ where, asterisk: [] });
		}
	});

	it('options-sorted-alphabetically: every list of choices is in alphabetical order, but those ordered by size', () => {
		const byName = (a: string, b: string) => a.localeCompare(b, undefined, { sensitivity: 'base' });
		const unsorted = CHOICES.filter(({ where, names }) => !ORDERED_BY_SIZE[where] && names.join('\n') !== [...names].sort(byName).join('\n'));
		expect(unsorted.map(({ where, names }) => `${where}: ${names.join(', ')}`)).toEqual([]);
		for (const [where, names] of Object.entries(ORDERED_BY_SIZE)) expect(CHOICES.find((choice) => choice.where === where)?.names).toEqual(names);
	});

	it('node-class-description-name-camelcase, non-core colour, one credential', () => {
		const descriptions: INodeTypeDescription[] = [new OmniVideo().description, new OmniVideoTrigger().description];
		for (const description of descriptions) {
			expect(description.name).toMatch(/^[a-z][a-zA-Z0-9]*$/);
			expect(String(description.defaults.color ?? '').toUpperCase()).not.toBe('#FF6D5A');
			expect(description.credentials).toHaveLength(1);
		}
		// cred-class-name-field-conventions: a credential's name starts lower case and ends with Api.
		expect(new OmniVideoApi().name).toMatch(/^[a-z]\w*Api$/);
	});
});

describe('require-continue-on-fail: with Continue On Fail, an error of the whole run is an error item per input item', () => {
	let sandbox: Sandbox;
	let n8n: N8nTestInstance;

	beforeAll(async () => {
		sandbox = await startSandbox({ port: 0 });
		n8n = await N8nTestInstance.start({ omniVideoApi: { apiKey: sandbox.keys.pro, baseUrl: sandbox.url, plan: 'pro' } });
	});
	afterAll(async () => {
		await n8n.stop();
		await sandbox.close();
	});

	async function runUnsupported(onError: 'continueRegularOutput' | 'continueErrorOutput') {
		// An operation the node does not have fails before any item is read: the whole run's error.
		const node = omniVideoNode('Omni Video', { resource: 'video', operation: 'remove' }, { onError });
		const run = await (await n8n.execute(workflowOf([node], {}), 'Omni Video', itemsOf({ row: 'a' }, { row: 'b' }))).finished;
		return { run, outputs: run.data.resultData.runData['Omni Video'].at(-1)?.data?.main ?? [] };
	}

	it('Continue (using error output): every item goes to the error output, none to the success one', async () => {
		const { run, outputs } = await runUnsupported('continueErrorOutput');
		expect(run.status).toBe('success');
		// Before: n8n passed the input items on unchanged, and the success output took them.
		expect(outputs[0] ?? []).toEqual([]);
		expect((outputs[1] ?? []).map((item) => [item.json.error, item.pairedItem])).toEqual([
			[expect.stringContaining('"remove" is not supported'), { item: 0 }],
			[expect.stringContaining('"remove" is not supported'), { item: 1 }],
		]);
	});

	it('Continue (regular output): every item is an error item, paired with its input item', async () => {
		const { run } = await runUnsupported('continueRegularOutput');
		expect(run.status).toBe('success');
		expect(outputOf(run, 'Omni Video').map((item) => [item.json.error, item.pairedItem])).toEqual([
			[expect.stringContaining('"remove" is not supported'), { item: 0 }],
			[expect.stringContaining('"remove" is not supported'), { item: 1 }],
		]);
	});
});
