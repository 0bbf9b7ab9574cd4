/* eslint-disable @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INodeProperties } from 'n8n-workflow';
import { OmniVideoApi } from '../../credentials/OmniVideoApi.credentials';
import { OmniVideo } from '../../nodes/OmniVideo/OmniVideo.node';
import { OmniVideoTrigger } from '../../nodes/OmniVideoTrigger/OmniVideoTrigger.node';
import { omniVideo } from '../../activepieces/src';
import { App } from '../support/zapier/harness';
import { repositoryRoot } from './markdown';

/** Each platform's page names every field its editor shows (issue 26: every operation and field). */
const page = (name: string) => readFileSync(join(repositoryRoot, 'docs', name), 'utf8');

function n8nFieldNames(properties: readonly INodeProperties[]): string[] {
	return properties.flatMap((property) => {
		if (property.type === 'notice') return [];
		const nested = property.type === 'collection' || property.type === 'fixedCollection'
			? n8nFieldNames((property.options ?? []) as INodeProperties[])
			: [];
		return property.type === 'collection' ? nested : [property.displayName, ...nested];
	});
}

function missing(names: string[], text: string): string[] {
	return [...new Set(names)].filter((name) => !text.includes(name));
}

it('docs/n8n.md names every field of the node, the trigger and the credential', () => {
	const names = n8nFieldNames([
		...new OmniVideo().description.properties,
		...new OmniVideoTrigger().description.properties,
		...new OmniVideoApi().properties,
	]);
	expect(names.length).toBeGreaterThan(15);
	expect(missing(names, page('n8n.md'))).toEqual([]);
});

it('docs/zapier.md names every field of the connection and every step', () => {
	const operations = [...Object.values(App.creates ?? {}), ...Object.values(App.searches ?? {}), ...Object.values(App.triggers ?? {})];
	const names = [
		...((App.authentication?.fields ?? []) as Array<{ label?: string }>).map((field) => field.label ?? ''),
		...operations.map((operation) => operation.display.label ?? ''),
		...operations.flatMap((operation) => (operation.operation.inputFields as Array<{ label?: string }>).map((field) => field.label ?? '')),
	].filter(Boolean);
	expect(names.length).toBeGreaterThan(15);
	expect(missing(names, page('zapier.md'))).toEqual([]);
});

it('docs/activepieces.md names every field of the connection and every step', () => {
	const auth = omniVideo.auth as unknown as { props?: Record<string, { displayName?: string }> };
	const steps = [...Object.values(omniVideo.actions()), ...Object.values(omniVideo.triggers())] as Array<{ displayName: string; props: Record<string, { displayName?: string; type?: string }> }>;
	const names = [
		...Object.values(auth.props ?? {}).map((prop) => prop.displayName ?? ''),
		...steps.map((step) => step.displayName),
		...steps.flatMap((step) => Object.values(step.props).filter((prop) => prop.type !== 'MARKDOWN').map((prop) => prop.displayName ?? '')),
	].filter(Boolean);
	expect(names.length).toBeGreaterThan(10);
	expect(missing(names, page('activepieces.md'))).toEqual([]);
});
