/* eslint-disable @n8n/community-nodes/no-restricted-imports -- a command-line tool's helper; never shipped */
import { stripVTControlCharacters } from 'node:util';

/**
 * Whether `n8n-node cloud-support` says this package is eligible for n8n Cloud. The CLI colours its
 * words whenever it thinks the terminal allows it (under CI=true too, even through a pipe), so the
 * verdict is read from the text with its escape codes removed.
 */
export function cloudSupportEnabled(output: string): boolean {
	return /Cloud support is ENABLED/.test(stripVTControlCharacters(output));
}
