import { config } from '@n8n/node-cli/eslint';
import { globalIgnores } from 'eslint/config';

/*
 * The Zapier app is linted with the n8n package's rules, less those that are about n8n's
 * community nodes: it is not one, runs as plain Node on Zapier, and imports zapier-platform-core.
 * The repository's own eslint.config.mjs stays n8n's default (n8n-node lint's strict mode checks
 * it); this file applies to zapier/ because `npm run lint` looks configs up from each file
 * (ESLint's v10_config_lookup_from_file, ESLint 10's default). Its package.json is not an n8n
 * package's, and build output is not source.
 */
export default [
	...config,
	globalIgnores(['package.json', 'build', 'core']),
	{
		files: ['**/*.ts'],
		rules: {
			'@n8n/community-nodes/no-restricted-globals': 'off',
			'@n8n/community-nodes/no-restricted-imports': 'off',
			'@n8n/community-nodes/require-node-api-error': 'off',
		},
	},
];
