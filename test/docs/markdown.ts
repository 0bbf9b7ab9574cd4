/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- test tooling, never shipped */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** A link or image target as written in a Markdown file, with the line it is on. */
export interface MarkdownLink {
	file: string;
	line: number;
	target: string;
}

/** The text outside fenced code blocks and code spans, line by line (links in code are not links). */
function proseLines(text: string): string[] {
	let fenced = false;
	return text.split('\n').map((line) => {
		if (/^\s*(```|~~~)/.test(line)) {
			fenced = !fenced;
			return '';
		}
		return fenced ? '' : line.replace(/`[^`]*`/g, '');
	});
}

/** Every inline link, image and reference definition of a Markdown file. */
export function linksOf(file: string): MarkdownLink[] {
	const links: MarkdownLink[] = [];
	proseLines(readFileSync(file, 'utf8')).forEach((line, index) => {
		for (const match of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
			links.push({ file, line: index + 1, target: match[1] });
		}
		const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)/.exec(line);
		if (definition) links.push({ file, line: index + 1, target: definition[1] });
	});
	return links;
}

/**
 * The anchors GitHub gives a file's headings: lower case, punctuation but `-` and `_` dropped,
 * spaces as hyphens, a repeated slug numbered -1, -2 (github-slugger's rules).
 */
export function anchorsOf(file: string): Set<string> {
	const anchors = new Set<string>();
	const seen = new Map<string, number>();
	let fenced = false;
	for (const line of readFileSync(file, 'utf8').split('\n')) {
		if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
		const heading = fenced ? null : /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
		if (heading) {
			const slug = githubSlug(heading[1]);
			const count = seen.get(slug) ?? 0;
			seen.set(slug, count + 1);
			anchors.add(count === 0 ? slug : `${slug}-${count}`);
		}
		for (const match of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1]);
	}
	return anchors;
}

export function githubSlug(heading: string): string {
	return heading
		.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
		.replace(/<[^>]+>/g, '')
		.toLowerCase()
		.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
		.replace(/ /g, '-');
}

/** What is wrong with a link, or undefined when it resolves. External links are not checked. */
export function brokenLink(link: MarkdownLink, root: string): string | undefined {
	const { target } = link;
	if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
	const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
	const path = pathPart === '' ? link.file : resolve(dirname(link.file), decodeURIComponent(pathPart));
	if (!path.startsWith(root)) return `${target} points outside the repository`;
	if (!existsSync(path)) return `${target}: no such file`;
	if (anchor === undefined || anchor === '') return undefined;
	if (statSync(path).isDirectory() || !path.endsWith('.md')) return `${target}: an anchor into a file that is not Markdown`;
	return anchorsOf(path).has(anchor) ? undefined : `${target}: no heading gives #${anchor} in ${path.slice(root.length + 1)}`;
}

export const repositoryRoot = join(__dirname, '..', '..');
