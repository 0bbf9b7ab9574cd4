/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test code, never shipped */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as zapierCore from 'zapier-platform-core';
import { App } from '../support/zapier/harness';

/** The app checked against Zapier's schema offline, the way `zapier-platform validate` does. */
const { createAppHandler } = zapierCore as unknown as {
	createAppHandler: (app: object) => (event: object) => Promise<{ results: unknown }>;
};

it('validates against Zapier\'s app schema', async () => {
	const { results } = await createAppHandler(App)({ command: 'validate' });
	expect(results).toEqual([]);
});

it('documents every field and every output, and has a sample for every operation', () => {
	const operations = [
		...Object.values(App.creates ?? {}),
		...Object.values(App.searches ?? {}),
		...Object.values(App.triggers ?? {}),
	];
	expect(operations.map((operation) => operation.key).sort()).toEqual(['findJob', 'generateVideo', 'jobCompleted', 'uploadImage']);
	for (const operation of operations) {
		expect(operation.operation.sample).toBeDefined();
		expect(operation.operation.outputFields?.length).toBeGreaterThan(0);
		for (const field of operation.operation.inputFields as Array<{ key: string; helpText?: string }>) {
			expect([operation.key, field.key, (field.helpText ?? '').length > 20]).toEqual([operation.key, field.key, true]);
		}
	}
	for (const field of App.authentication?.fields ?? []) expect((field as { helpText?: string }).helpText?.length).toBeGreaterThan(20);
});

it('pins the same zapier-platform-core for the app and its tests', () => {
	const version = (path: string) =>
		(JSON.parse(readFileSync(join(__dirname, path), 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> });
	const app = version('../../zapier/package.json').dependencies?.['zapier-platform-core'];
	expect(app).toMatch(/^\d+\.\d+\.\d+$/);
	expect(version('../../package.json').devDependencies?.['zapier-platform-core']).toBe(app);
	expect(App.platformVersion).toBe(app);
});
