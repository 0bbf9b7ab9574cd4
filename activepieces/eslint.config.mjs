// Activepieces lints its pieces with typescript-eslint's recommended rules (the monorepo adds Nx's
// module boundaries, which a piece outside the monorepo has none of).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
	{ ignores: ['dist', 'node_modules'] },
	{
		files: ['src/**/*.ts'],
		extends: [js.configs.recommended, tseslint.configs.recommended],
		rules: {
			'no-console': 'error',
		},
	},
);
