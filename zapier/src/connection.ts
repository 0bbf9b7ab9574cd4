import { baseUrlProblem, normaliseBaseUrl } from '../../core';

export { baseUrlProblem };

/**
 * Zapier ends a step after 30 s, and its own work (starting the app, storing the output) comes out
 * of that: core gets this much, and every wait, retry and request timeout ends inside it.
 */
export const STEP_BUDGET_MS = 22_000;
/** A connection test answers within a few seconds, right or wrong. */
export const CONNECTION_TEST_BUDGET_MS = 5_000;

/** The moment core must be done by, on the clock core is given (Date.now). */
export function deadlineIn(budgetMs: number = STEP_BUDGET_MS): number {
	return Date.now() + budgetMs;
}

/** The connection's base URL as every request uses it (see normaliseBaseUrl). */
export function connectionBaseUrl(authData: Record<string, unknown>): string {
	return normaliseBaseUrl(authData.baseUrl);
}
