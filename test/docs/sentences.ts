/**
 * How many sentences a field's description has, as a reader counts them: a sentence ends at `.`,
 * `!` or `?` followed by a space and a capital (or the end). Abbreviations (e.g., i.e., etc.),
 * decimals, file names and URLs do not end one.
 */
export function countSentences(text: string): number {
	const plain = text
		.replace(/`[^`]*`/g, 'code')
		.replace(/\b(e\.g|i\.e|etc|vs|approx)\./gi, '$1')
		.replace(/https?:\/\/\S+/g, 'url')
		.trim();
	if (plain === '') return 0;
	const ends = plain.match(/[.!?]+(?=["')\]]*(\s+["'(`*[]?[A-Z0-9]|\s*$))/g) ?? [];
	const last = /[.!?]["')\]]*$/.test(plain) ? 0 : 1;
	return ends.length + last;
}
