import { runsOnEngineV2 } from '../../nodes/OmniVideo/actions/video/callbackFallback';

// n8n's Engine 2.0 (2.37+, opt-in per workflow) cannot resume a waiting execution; the node tells it
// by its execution ids, UUIDv7 (n8n's executions/execution-id), where the classic engine counts.
describe("Wait for Callback under n8n's Engine 2.0", () => {
	it('is told by an Engine 2.0 execution id', () => {
		expect(runsOnEngineV2('019a8f3e-7c1b-7d2e-9f40-1a2b3c4d5e6f')).toBe(true);
	});

	it.each(['1', '6', '123456', '', undefined])('is not the classic engine (execution id %p)', (id) => {
		expect(runsOnEngineV2(id)).toBe(false);
	});
});
