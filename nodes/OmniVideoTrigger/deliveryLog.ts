import type { IDataObject } from 'n8n-workflow';

/** Deliveries are retried for about a day; remembering them a bit longer covers every retry. */
const KEEP_MS = 26 * 60 * 60 * 1000;
const MAX_REMEMBERED = 1000;

/**
 * Records a callback delivery in the workflow's static data; false when it was seen before.
 * Standard Webhooks keeps `webhook-id` across retries, so a resent callback is recognised.
 */
export function rememberDelivery(staticData: IDataObject, deliveryId: string, nowMs: number): boolean {
	const seen = (staticData.deliveries ?? {}) as Record<string, number>;
	if (seen[deliveryId] !== undefined && nowMs - seen[deliveryId] < KEEP_MS) return false;
	const kept = Object.entries(seen)
		.filter(([, at]) => nowMs - at < KEEP_MS)
		.sort(([, a], [, b]) => b - a)
		.slice(0, MAX_REMEMBERED - 1);
	// Assigning (not mutating) marks the static data as changed, so n8n saves it.
	staticData.deliveries = { ...Object.fromEntries(kept), [deliveryId]: nowMs };
	return true;
}
