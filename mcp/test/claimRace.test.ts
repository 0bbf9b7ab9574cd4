import { InMemoryTransport } from '@modelcontextprotocol/server';
import { ServerLedger } from '../src/ledger';
import { createServer } from '../src/server';
import { MemoryStore } from '../src/state/store';
import { requestIdentity } from '../src/requestKey';
import { validateGenerateInput } from '../../core';
import { clientOver } from './support/clients';
import { call, counts, inProcessContext, NO_AUTH, READINGS, sandboxFor } from './support/mcpHarness';

jest.setTimeout(60_000);

/**
 * Two processes on one records folder, asked the same create at the same moment: this call reads
 * the records before the other process claims the create, and core reads them after (CI met it once
 * on two real processes). The call must wait for the other's answer, not call the outcome unknown,
 * and must not mark the other's create as lost.
 */
describe.each(READINGS)('a create claimed by another process between the call’s look and core’s, --service %s', (reading) => {
	it('waits for that process’s answer and returns its job, sending nothing', async () => {
		const sandbox = await sandboxFor(reading);
		try {
			const store = new MemoryStore();
			const context = inProcessContext(sandbox, store);
			const { settings } = context;
			const elsewhere = new ServerLedger(store, () => Date.now());
			const args = { prompt: 'A lighthouse in fog', resolution: '720P' as const, duration: 4 };
			// The key this call will use: the same arguments on the same key within the retry window.
			const identity = await requestIdentity(context.connect(NO_AUTH).fingerprint, validateGenerateInput(args), {
				retryWindowMs: settings.retryWindowMinutes * 60_000,
				read: async () => undefined,
				nowMs: Date.now(),
			});
			// The other process's job, made by its own create (its own client, its own records).
			const otherProcess = inProcessContext(sandbox);
			const otherJobId = (await otherProcess.connect(NO_AUTH).client.generateVideo(args)).job.id;

			// The first look at the records finds nothing; right after it the other process claims the create,
			// and its answer is noted a moment later.
			const read = context.ledger.read.bind(context.ledger);
			let looks = 0;
			context.ledger.read = async (key) => {
				const found = await read(key);
				if (key === identity.idempotencyKey && looks++ === 0) {
					await elsewhere.claim(key, { sentAtMs: Date.now() });
					setTimeout(() => void elsewhere.note(key, { jobId: String(otherJobId) }), 500);
				}
				return found;
			};

			const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
			const server = createServer(context);
			await server.connect(serverSide);
			const client = await clientOver('v2-legacy', clientSide);
			try {
				const result = await call(client, 'generate_video', { ...args, waitSeconds: 5 });
				expect(result.isError).toBeFalsy();
				expect(result.output).toMatchObject({ jobId: otherJobId, retried: true });
				expect(counts(sandbox).creates).toBe(1);
				// The other process's create is still its own, its answer noted: nobody was told it was lost.
				expect(await context.ledger.find(identity.idempotencyKey)).toEqual({ jobId: otherJobId });
				// The job's look schedule runs on after the call's receipt: it ends with the job, before the sandbox stops.
				await context.watches.running(otherJobId)?.then((watch) => watch.ended);
			} finally {
				await client.close();
				await server.close();
			}
		} finally {
			await sandbox.close();
		}
	});
});
