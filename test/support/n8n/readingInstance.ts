import { startSandbox, type Sandbox } from '../../../sandbox';
import { PLANS } from '../../../core/types';
import { N8nTestInstance } from './instance';
import { spedUpPlan } from './workflows';
import { readingOfThisRun, serviceFront, type ServiceFront } from '../serviceReading';

/** A sandbox at `speed`, this run's reading of it (serviceReading.ts) and an n8n engine on a Premium key through it. */
export interface ReadingInstance {
	sandbox: Sandbox;
	front: ServiceFront;
	n8n: N8nTestInstance;
	close(): Promise<void>;
}

export async function startOnReading(speed: number): Promise<ReadingInstance> {
	// Plain http callbacks to this machine, so that Wait for Callback parks here.
	const sandbox = await startSandbox({ port: 0, speed, insecureCallbacks: true });
	const front = await serviceFront(sandbox.url, readingOfThisRun());
	const n8n = await N8nTestInstance.start({ omniVideoApi: { apiKey: sandbox.keys.premium, baseUrl: front.url, ...spedUpPlan(PLANS.premium, speed) } });
	return {
		sandbox,
		front,
		n8n,
		close: async () => {
			await n8n.stop();
			await front.close();
			await sandbox.close();
		},
	};
}
