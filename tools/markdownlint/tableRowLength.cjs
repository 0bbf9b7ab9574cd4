// @ts-check
'use strict';

/**
 * markdownlint's line-length rule (MD013) caps prose; a table row is one line however many cells it
 * has, so it gets a cap of its own: long enough for a cell of a sentence or two, short enough that a
 * reader never scrolls through a paragraph hidden in a cell.
 *
 * @type {import('markdownlint').Rule}
 */
module.exports = {
	names: ['table-row-length'],
	description: 'Table row too long',
	tags: ['line_length', 'table'],
	parser: 'none',
	function: (params, onError) => {
		const max = Number(params.config.maximum ?? 400);
		let fenced = false;
		params.lines.forEach((line, index) => {
			if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
			if (!fenced && /^\s*\|/.test(line) && line.length > max) {
				onError({ lineNumber: index + 1, detail: `Expected: ${max}; Actual: ${line.length}` });
			}
		});
	},
};
