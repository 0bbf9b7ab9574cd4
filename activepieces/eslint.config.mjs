// Activepieces lints its pieces with typescript-eslint's recommended rules (the monorepo adds Nx's
// module boundaries, which a piece outside the monorepo has none of).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The repository's root lint (n8n's, strict) runs over every .ts file, this piece's too; the file
// headers switch off its n8n-only rules. Declared here as rules that report nothing, so that those
// headers name known rules.
const quiet = { create: () => ({}) };
const n8nRulesSwitchedOff = { rules: { 'no-restricted-imports': quiet, 'no-restricted-globals': quiet, 'require-node-api-error': quiet } };

export default tseslint.config(
	{ ignores: ['dist', 'node_modules', 'index.bundle.js', 'src/index.js'] },
	{
		files: ['src/**/*.ts', 'test/**/*.ts'],
		extends: [js.configs.recommended, tseslint.configs.recommended],
		plugins: { '@n8n/community-nodes': n8nRulesSwitchedOff },
		linterOptions: { reportUnusedDisableDirectives: 'off' },
		rules: {
			'no-console': 'error',
		},
	},
);
