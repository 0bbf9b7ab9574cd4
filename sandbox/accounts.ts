import type { PlanLimits } from '../core/types';
import { planLimits, type AccountConfig, type KeyConfig, type SandboxConfig } from './config';

export interface Account {
	id: string;
	userId: string;
	limits?: PlanLimits;
	balance: number;
	reserved: number;
}

export interface ApiKey {
	key: string;
	/** Shown in the journal instead of the key. */
	label: string;
	account: Account;
	budget?: number;
	spent: number;
	reserved: number;
	revoked: boolean;
	scenarios: string[];
	echo?: string;
}

export type CreditRefusal = 'key_budget_exceeded' | 'insufficient_credits';

/** Keys, accounts and credits: reserved on create, settled on done, released on failure. */
export class Accounts {
	readonly accounts = new Map<string, Account>();
	readonly keys = new Map<string, ApiKey>();

	constructor(config: SandboxConfig) {
		for (const account of config.accounts) this.addAccount(account);
		for (const key of config.keys) this.addKey(key);
	}

	addAccount(config: AccountConfig): Account {
		const account: Account = {
			id: config.id,
			userId: config.userId ?? `user_${config.id}`,
			limits: planLimits(config.plan),
			balance: config.balance,
			reserved: 0,
		};
		this.accounts.set(account.id, account);
		return account;
	}

	addKey(config: KeyConfig): ApiKey {
		const account = this.accounts.get(config.account);
		if (!account) throw new Error(`Sandbox config: key ${config.label ?? '?'} names unknown account ${config.account}`);
		const key: ApiKey = {
			key: config.key,
			label: config.label ?? `key …${config.key.slice(-4)}`,
			account,
			budget: config.budget,
			spent: 0,
			reserved: 0,
			revoked: config.revoked === true,
			scenarios: config.scenarios ?? [],
			echo: config.echo,
		};
		this.keys.set(key.key, key);
		return key;
	}

	find(key: string | undefined): ApiKey | undefined {
		return key ? this.keys.get(key) : undefined;
	}

	/** Why the job cannot be paid for, or undefined when it can (the key's budget is checked first). */
	refusal(key: ApiKey, price: number): CreditRefusal | undefined {
		if (key.budget !== undefined && key.budget - key.spent - key.reserved < price) return 'key_budget_exceeded';
		if (key.account.balance - key.account.reserved < price) return 'insufficient_credits';
		return undefined;
	}

	reserve(key: ApiKey, price: number): void {
		key.reserved += price;
		key.account.reserved += price;
	}

	settle(key: ApiKey, price: number): void {
		this.release(key, price);
		key.spent += price;
		key.account.balance -= price;
	}

	release(key: ApiKey, price: number): void {
		key.reserved -= price;
		key.account.reserved -= price;
	}
}
