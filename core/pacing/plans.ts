import { PLANS, type PlanLimits } from '../types';

/** What a credential says about its plan: a named plan, or custom limits. */
export interface PlanSetting {
	plan?: unknown;
	requestsPerMinute?: unknown;
	requestsPerHour?: unknown;
	concurrentJobs?: unknown;
}

/** The limits a credential's plan stands for; a custom field left empty falls back to Pro's. */
export function planLimits(setting: PlanSetting): PlanLimits {
	if (setting.plan === 'custom') {
		return {
			requestsPerMinute: Number(setting.requestsPerMinute) || PLANS.pro.requestsPerMinute,
			requestsPerHour: Number(setting.requestsPerHour) || PLANS.pro.requestsPerHour,
			concurrentJobs: Number(setting.concurrentJobs) || PLANS.pro.concurrentJobs,
		};
	}
	return setting.plan === 'premium' ? PLANS.premium : PLANS.pro;
}
