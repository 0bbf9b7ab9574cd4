// Builds the job view (src/view/) into one self-contained HTML file, dist/job-view.html: the script
// bundled and minified, the style minified, both inlined; nothing is loaded from elsewhere.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync, transformSync } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const view = join(root, 'src', 'view');
const script = buildSync({ entryPoints: [join(view, 'jobView.ts')], bundle: true, minify: true, write: false, format: 'iife', target: 'es2020', platform: 'browser', legalComments: 'none' }).outputFiles[0].text.trim();
const style = transformSync(readFileSync(join(view, 'jobView.css'), 'utf8'), { loader: 'css', minify: true }).code.trim();
const html = readFileSync(join(view, 'jobView.html'), 'utf8')
	.replace(/>\s+</g, '><')
	.replace(/\n/g, '')
	.replace('/*STYLE*/', () => style)
	// A "</script" in the script would end it early.
	.replace('/*SCRIPT*/', () => script.replace(/<\/script/gi, '<\\/script'));
const out = join(root, 'dist', 'job-view.html');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, html);
