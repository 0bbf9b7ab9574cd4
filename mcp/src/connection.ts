import { createOmniVideoClient, forgetKey, isLocalSandbox, keyFingerprint, PLANS, type CredentialCheck, type OmniVideoClient, type PlanName } from '../../core';
import { sharedPlanIn } from './planRecords';
import type { StateStore } from './state/store';
import { fetchTransport } from './fetchTransport';
import type { Settings } from './settings';
import { sleep } from './sleep';

/** A core client for one key, and the name it is known by in records (never the key). */
export interface Connection {
	client: OmniVideoClient;
	fingerprint: string;
	baseUrl: string;
	allowInsecureLoopbackCallback: boolean;
	/** With --public-url: the address the service calls back when a job of this key ends (any replica answers it). */
	callbackUrl?: string;
}

/** Why a call cannot reach the service: said to the agent, which tells the user. */
export class NotConfiguredError extends Error {
	readonly code = 'not_configured';
}

/** The callback route: the key's fingerprint after it names whose job it is (never the key). */
export const CALLBACK_PATH = '/callbacks/';


/**
 * One client per key for the life of the process: core's limiter is shared by key already, and
 * the client's made-jobs memory with it, so that every call and session on one key is paced
 * together; with every other process on the key, through the plan's record in the store.
 */
export class Connections {
	private readonly clients = new Map<string, Connection>();

	constructor(
		private readonly settings: Settings,
		private readonly store: StateStore,
		/** This process's name among those sharing the records. */
		private readonly holderId: string,
	) {}

	/** The client for the call's key: the request's bearer key over HTTP, else OMNI_VIDEO_API_KEY; on the server's plan unless a signed-in person gave theirs. */
	forKey(requestKey: string | undefined, plan: PlanName = this.settings.plan): Connection {
		const { baseUrl, baseUrlProblem } = this.settings;
		if (baseUrl === '') {
			throw new NotConfiguredError('The Omni Video MCP server has no base URL. Tell the user to set OMNI_VIDEO_BASE_URL in the server\'s configuration to the API address from their Omni Video dashboard (docs/mcp.md#settings), then restart it.');
		}
		if (baseUrlProblem) throw new NotConfiguredError(`${baseUrlProblem} Tell the user to fix OMNI_VIDEO_BASE_URL in the server's configuration, then restart it.`);
		const apiKey = requestKey ?? this.settings.envApiKey;
		if (!apiKey) {
			throw new NotConfiguredError(
				this.settings.transport === 'http'
					? 'No Omni Video API key: send it as the Authorization: Bearer header of the MCP connection (or set OMNI_VIDEO_API_KEY where the server runs). Tell the user to add it to the client\'s connection settings.'
					: 'No Omni Video API key: tell the user to set OMNI_VIDEO_API_KEY in the env of this server\'s entry in their MCP client configuration, then restart it.',
			);
		}
		const fingerprint = keyFingerprint(apiKey, baseUrl);
		let connection = this.clients.get(fingerprint);
		if (!connection) {
			const client = createOmniVideoClient({
				baseUrl,
				transport: fetchTransport(apiKey),
				clock: { now: () => Date.now() },
				sleep,
				random: Math.random,
				limits: PLANS[plan],
				limiterKey: fingerprint,
				redact: [apiKey],
				// Every process on the key paces through one record: the plan is the key's, not the process's.
				sharedPlan: { plan: sharedPlanIn(this.store, fingerprint), holderId: this.holderId },
			});
			const callbackUrl = this.settings.publicUrl === undefined ? undefined : `${this.settings.publicUrl}${CALLBACK_PATH}${fingerprint}`;
			connection = { client, fingerprint, baseUrl, allowInsecureLoopbackCallback: isLocalSandbox(baseUrl), callbackUrl };
			this.clients.set(fingerprint, connection);
		}
		return connection;
	}

	/**
	 * Lets go of a key the service refused: its client and all core keeps for it. A server open to
	 * anyone would otherwise keep an entry for every wrong bearer key sent to it.
	 */
	forget(requestKey: string | undefined): void {
		const apiKey = requestKey ?? this.settings.envApiKey;
		if (!apiKey) return;
		const fingerprint = keyFingerprint(apiKey, this.settings.baseUrl);
		this.clients.delete(fingerprint);
		forgetKey(fingerprint);
	}

	/**
	 * Checks a key someone typed at sign-in with one lookup that costs no credits, on a client of its
	 * own: a wrong key leaves nothing behind.
	 */
	async check(apiKey: string, plan: PlanName): Promise<CredentialCheck & { fingerprint: string }> {
		const { baseUrl } = this.settings;
		const fingerprint = keyFingerprint(apiKey, baseUrl);
		const client = createOmniVideoClient({ baseUrl, transport: fetchTransport(apiKey), clock: { now: () => Date.now() }, sleep, random: Math.random, limits: PLANS[plan], limiterKey: fingerprint, redact: [apiKey] });
		const checked = await client.testCredentials({ deadlineAtMs: Date.now() + 10_000 });
		// Pacing shared with the key's calls in this process stays; a key not in use here and not taken is let go of.
		if (!checked.ok && !this.clients.has(fingerprint)) forgetKey(fingerprint);
		return { ...checked, fingerprint };
	}
}
