/** How long records are kept: as long as the service keeps an idempotency key (docs/mcp.md#retries-and-new-videos). */
export const KEEP_MS = 24 * 60 * 60_000;
