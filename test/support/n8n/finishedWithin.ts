/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never shipped */
import type { IRun } from 'n8n-workflow';
import type { Execution } from './instance';

/** The execution's final run, or a failure naming its state once `realMs` real milliseconds have passed. */
export async function finishedWithin(execution: Execution, realMs = 20_000): Promise<IRun> {
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`execution ${execution.id} still ${execution.status} after ${realMs} ms`)), realMs);
	});
	try {
		return await Promise.race([execution.finished, timeout]);
	} finally {
		clearTimeout(timer);
	}
}
