// The entries Activepieces' loaders look for, beside package.json's `main` (what tsc built):
// - index.bundle.js at the package's root: the piece and everything it imports in one file. An
//   archive uploaded to an instance is unpacked with its root as the piece's folder, and only a
//   bundle there is loaded (the worker's piece-installer.ts installs nothing for an archive);
//   today's engine also prefers a package's own bundle to its `main` (piece-loader.ts).
// - src/index.js: engines of older releases load `<package>/src/index.js` and ignore `main`.
// keepNames: the engine finds the piece by its constructor's name (`Piece`).
import { build } from 'esbuild';
import { writeFileSync } from 'node:fs';

writeFileSync(
	'src/index.js',
	"// Written by build/entries.mjs: the entry older Activepieces engines load, whatever `main` says.\nmodule.exports = require('../dist/activepieces/src/index.js');\n",
);
await build({
	entryPoints: ['src/index.ts'],
	bundle: true,
	platform: 'node',
	target: 'node20',
	format: 'cjs',
	keepNames: true,
	legalComments: 'none',
	logLevel: 'warning',
	outfile: 'index.bundle.js',
});
