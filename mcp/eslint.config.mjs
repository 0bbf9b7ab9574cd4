// The MCP server is plain Node on npm, not an n8n community node: typescript-eslint's recommended
// rules, as for the Activepieces piece. The repository's root lint (n8n's, strict) looks configs up
// from each file (ESLint's v10_config_lookup_from_file), so this file is the one that applies here;
// n8n's rule names are declared as rules that report nothing, so that no header need switch them off.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const quiet = { create: () => ({}) };
const n8nRulesSwitchedOff = { rules: { 'no-restricted-imports': quiet, 'no-restricted-globals': quiet, 'require-node-api-error': quiet } };

export default tseslint.config(
	{ ignores: ['dist', 'node_modules', 'package.json', 'server.json'] },
	{
		files: ['src/**/*.ts', 'test/**/*.ts'],
		extends: [js.configs.recommended, tseslint.configs.recommended],
		plugins: { '@n8n/community-nodes': n8nRulesSwitchedOff },
		rules: {
			// stdout is the protocol over stdio: the server speaks on stderr only.
			'no-console': 'error',
			'@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
		},
	},
);
