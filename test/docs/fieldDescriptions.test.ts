import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';
import { OmniVideoApi } from '../../credentials/OmniVideoApi.credentials';
import { OmniVideo } from '../../nodes/OmniVideo/OmniVideo.node';
import { OmniVideoTrigger } from '../../nodes/OmniVideoTrigger/OmniVideoTrigger.node';
import { omniVideo } from '../../activepieces/src';
import { App } from '../support/zapier/harness';
import { countSentences } from './sentences';

/**
 * The editor says what the docs say, shorter (issue 26): every field's description in the n8n node,
 * the Zapier app and the Activepieces piece is at most two sentences. A longer explanation belongs
 * in docs/<platform>.md, or in an n8n hint or notice shown where it matters.
 */
const MAX_SENTENCES = 2;

type Found = { where: string; text: string };

function n8nTexts(where: string, properties: readonly INodeProperties[]): Found[] {
	const found: Found[] = [];
	for (const property of properties) {
		const here = `${where} → ${property.displayName}`;
		// A notice's text is its displayName: it is shown on purpose, where it matters, and may run longer.
		if (property.type !== 'notice' && property.description) found.push({ where: here, text: property.description });
		for (const option of (property.options ?? []) as unknown[]) {
			const entry = option as { name?: string; displayName?: string; description?: string; type?: string; values?: INodeProperties[] };
			// A collection's option is a property of its own; an options list's option is a choice.
			if (entry.type !== undefined) found.push(...n8nTexts(here, [entry as INodeProperties]));
			else if (Array.isArray(entry.values)) found.push(...n8nTexts(`${here} → ${entry.displayName ?? entry.name}`, entry.values));
			else if (entry.description) found.push({ where: `${here} → ${entry.name}`, text: entry.description });
		}
	}
	return found;
}

function zapierTexts(): Found[] {
	const found: Found[] = [];
	const fields = (App.authentication?.fields ?? []) as Array<{ key: string; helpText?: string }>;
	for (const field of fields) if (field.helpText) found.push({ where: `Zapier connection → ${field.key}`, text: field.helpText });
	const operations = [...Object.values(App.creates ?? {}), ...Object.values(App.searches ?? {}), ...Object.values(App.triggers ?? {})];
	for (const operation of operations) {
		if (operation.display.description) found.push({ where: `Zapier ${operation.key}`, text: operation.display.description });
		for (const field of operation.operation.inputFields as Array<{ key: string; helpText?: string }>) {
			if (field.helpText) found.push({ where: `Zapier ${operation.key} → ${field.key}`, text: field.helpText });
		}
	}
	return found;
}

function activepiecesTexts(): Found[] {
	const found: Found[] = [];
	const props = (where: string, record: Record<string, { description?: string; type?: string }> | undefined) => {
		for (const [key, prop] of Object.entries(record ?? {})) {
			// A MarkDown property is the piece's instructions, shown as a block (Activepieces' notice).
			if (prop.description && prop.type !== 'MARKDOWN') found.push({ where: `${where} → ${key}`, text: prop.description });
		}
	};
	const auth = omniVideo.auth as unknown as { description?: string; props?: Record<string, { description?: string }> };
	if (auth.description) found.push({ where: 'Activepieces connection', text: auth.description });
	props('Activepieces connection', auth.props);
	for (const [kind, steps] of [['action', omniVideo.actions()], ['trigger', omniVideo.triggers()]] as const) {
		for (const step of Object.values(steps as Record<string, { name: string; description: string; props: Record<string, { description?: string; type?: string }> }>)) {
			found.push({ where: `Activepieces ${kind} ${step.name}`, text: step.description });
			props(`Activepieces ${kind} ${step.name}`, step.props);
		}
	}
	return found;
}

function tooLong(found: Found[]): string[] {
	return found.filter(({ text }) => countSentences(text) > MAX_SENTENCES).map(({ where, text }) => `${where} (${countSentences(text)} sentences): ${text}`);
}

describe('every field description is at most two sentences', () => {
	it('in the n8n node, the trigger and the credential', () => {
		const nodes: Array<[string, INodeTypeDescription]> = [
			['Omni Video', new OmniVideo().description],
			['Omni Video Trigger', new OmniVideoTrigger().description],
		];
		const found = nodes.flatMap(([name, description]) => n8nTexts(name, description.properties));
		found.push(...n8nTexts('Omni Video API credential', new OmniVideoApi().properties));
		expect(found.length).toBeGreaterThan(20);
		expect(tooLong(found)).toEqual([]);
	});

	it('in the Zapier app', () => {
		const found = zapierTexts();
		expect(found.length).toBeGreaterThan(10);
		expect(tooLong(found)).toEqual([]);
	});

	it('in the Activepieces piece', () => {
		const found = activepiecesTexts();
		expect(found.length).toBeGreaterThan(10);
		expect(tooLong(found)).toEqual([]);
	});
});

describe('countSentences', () => {
	it.each([
		['One sentence.', 1],
		['No full stop at the end', 1],
		['First one. Second one.', 2],
		['First. Second! Third?', 3],
		['Renders take 30–90 s, e.g. 1.5 minutes at 4K. Then it is done.', 2],
		['Use `video.mp4` or https://example.com/a.b (e.g. a CDN).', 1],
		['Pro: 30 a minute. Premium: 60.\nCustom: as set.', 3],
	])('%j has %d', (text, count) => {
		expect(countSentences(text)).toBe(count);
	});
});
