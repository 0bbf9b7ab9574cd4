/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/**
 * A scaled check's timeline, written for study when E2E_TIMELINE_DIR names a folder: the sandbox's
 * journal since the check began, its jobs (created, ended), the callbacks' deliveries and what the
 * proxy passed where. `npx tsx tools/timeline.ts FILE` reads one back: places used, requests an
 * hour, lookups and refused callbacks over time.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sandbox } from '../../sandbox';

export async function writeTimeline(
	name: string,
	parts: { sandbox: Sandbox; from: number; attempts: unknown[]; callbacks: unknown[]; jobs: { id: string; createdAt: number; endsAt: number }[] },
): Promise<void> {
	const folder = process.env.E2E_TIMELINE_DIR;
	if (!folder) return;
	await mkdir(folder, { recursive: true });
	const { sandbox } = parts;
	const timeline = {
		speed: sandbox.clock.speed,
		endedAt: sandbox.clock.now(),
		journal: sandbox.journal.slice(parts.from),
		jobs: parts.jobs.map((job) => ({ id: job.id, createdAt: job.createdAt, endsAt: job.endsAt })),
		attempts: parts.attempts,
		callbacks: parts.callbacks,
	};
	await writeFile(join(folder, `${name}-${Date.now().toString(36)}.json`), JSON.stringify(timeline));
}
