/* eslint-disable @n8n/community-nodes/no-restricted-globals -- test code, never shipped */
import { startSandbox } from '../../sandbox';
import type { Transport } from '../../core';
import { createAxiosTransport } from '../../node-host/axiosTransport';
import { hostClockFor } from '../../nodes/shared/hostClock';

/** The node's clock (nodes/shared/hostClock.ts): real time unless a local sandbox asks its clients to keep its own. */

const plain = createAxiosTransport({ apiKey: 'unused' });

it('keeps a sped-up sandbox’s clock when the sandbox asks (--client-clock sandbox): its now, durations and n8n’s wake in real time', async () => {
	const sandbox = await startSandbox({ port: 0, speed: 100, clientClock: 'sandbox' });
	try {
		// Moved ahead by an hour: a clock of its own, not the real one sped up from now.
		sandbox.clock.advance(3_600_000);
		const clock = await hostClockFor(sandbox.url, plain);
		// Within the read's time (50 real ms are 5 s of the sandbox's): a loaded machine answers slowly.
		expect(Math.abs(clock.now() - sandbox.clock.now())).toBeLessThan(5_000);
		await new Promise((resolve) => setTimeout(resolve, 300));
		// 300 real ms are 30 s of the sandbox's: a clock that did not run at its speed would be that far off.
		expect(Math.abs(clock.now() - sandbox.clock.now())).toBeLessThan(5_000);
		expect(clock.now() - Date.now()).toBeGreaterThan(3_500_000);
		expect(clock.realMs(60_000)).toBe(600);
		const wake = clock.realDate(clock.now() + 60_000).getTime() - Date.now();
		expect(wake).toBeGreaterThan(550);
		expect(wake).toBeLessThan(650);
	} finally {
		await sandbox.close();
	}
});

it('runs on real time against a sandbox that does not ask, and asks nothing of a service that is not a local sandbox', async () => {
	const sandbox = await startSandbox({ port: 0, speed: 100 });
	try {
		const clock = await hostClockFor(sandbox.url, plain);
		expect(Math.abs(clock.now() - Date.now())).toBeLessThan(50);
		expect(clock.realMs(60_000)).toBe(60_000);
	} finally {
		await sandbox.close();
	}
	const refusing: Transport = {
		api: () => Promise.reject(new Error('no request expected')),
		plain: () => Promise.reject(new Error('no request expected')),
	};
	const sent = jest.fn(refusing.plain);
	const clock = await hostClockFor('https://api.omnivideo.example', { ...refusing, plain: sent });
	expect(sent).not.toHaveBeenCalled();
	expect(clock.realDate(1_000).getTime()).toBe(1_000);
});

it('drops a reading whose round trip is long (a busy event loop reads answers late), which would put the clock ahead', async () => {
	jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
	try {
		jest.setSystemTime(1_000_000);
		const speed = 100;
		// The sandbox's clock: its own epoch, running at 100x the machine's.
		const sandboxNow = () => 5_000_000_000 + Date.now() * speed;
		let answerLateMs = 0;
		const transport: Transport = {
			api: () => Promise.reject(new Error('no request expected')),
			plain: () => {
				// The answer is read this long after the sandbox wrote it.
				const body = { nowMs: sandboxNow(), speed, clientClock: 'sandbox' };
				jest.setSystemTime(Date.now() + answerLateMs);
				return Promise.resolve({ status: 200, headers: {}, body });
			},
		};
		const url = 'http://127.0.0.1:1';
		const clock = await hostClockFor(url, transport);
		expect(clock.now()).toBe(sandboxNow());
		// The next reading, past the resync time, is read 400 real ms late: placed at the middle of
		// its round trip it would be 200 real ms, 20 s of the sandbox's, ahead.
		jest.setSystemTime(Date.now() + 6_000);
		answerLateMs = 400;
		await hostClockFor(url, transport);
		expect(Math.abs(clock.now() - sandboxNow())).toBeLessThan(1_000);
		// A change of speed is taken whatever the round trip.
		const before = clock.realMs(60_000);
		jest.setSystemTime(Date.now() + 6_000);
		const faster: Transport = { ...transport, plain: async (request) => ({ ...(await transport.plain(request)), body: { nowMs: sandboxNow(), speed: 200, clientClock: 'sandbox' } }) };
		await hostClockFor(url, faster);
		expect(before).toBe(600);
		expect(clock.realMs(60_000)).toBe(300);
	} finally {
		jest.useRealTimers();
	}
});
