import { readSettings, SettingsError, type SpendCap } from '../settings';
import { openStore } from './openStore';
import { list } from '../state/recordStep';
import { Accounts, MEMBER_NAME, type MemberSignIn } from '../signIn/accounts';

export const MEMBERS_USAGE = `omni-video-mcp members: the people who sign in with the team's key (--sign-in team)
  omni-video-mcp members add NAME [--cap CREDITS] [--hours H]   adds NAME and prints their sign-in code (shown once)
  omni-video-mcp members list                                   each member, their cap, their last sign-in and apps, and the jobs they made
  omni-video-mcp members jobs NAME                              the jobs NAME made (the latest 50, newest first)
  omni-video-mcp members cap NAME CREDITS|off [--hours H]       sets or lifts NAME's own spend cap (per 24 h unless --hours)
  omni-video-mcp members remove NAME                            ends NAME's sign-in and tokens at once, on every replica
With the server's records: the same --state-dir, or --redis URL [--redis-cluster], as the server (or their environment variables).`;

const STORE_FLAGS = ['--state-dir', '--state-file', '--redis', '--redis-cluster'];

const toStderr = (line: string) => void process.stderr.write(`${line}\n`);

/**
 * Runs a members command against the server's records: `say` is what the admin is shown (a new
 * member's code among it), `log` one line for each change, for the operator's log, never with a code.
 * Throws SettingsError.
 */
export async function membersCommand(argv: string[], env: Record<string, string | undefined>, say: (line: string) => void, log: (line: string) => void = toStderr): Promise<void> {
	const words: string[] = [];
	const storeArgs: string[] = [];
	let capText: string | undefined;
	let hoursText: string | undefined;
	for (let i = 0; i < argv.length; i++) {
		const [flag, inline] = argv[i].split(/=(.*)/s, 2);
		const value = () => inline ?? argv[++i];
		if (flag === '--cap') capText = value();
		else if (flag === '--hours') hoursText = value();
		else if (flag === '--redis-cluster') storeArgs.push(flag);
		else if (STORE_FLAGS.includes(flag)) storeArgs.push(flag, value() ?? '');
		else if (flag === '--help') return say(MEMBERS_USAGE);
		else if (flag.startsWith('--')) throw new SettingsError(`Unknown option ${flag} for members.\n${MEMBERS_USAGE}`);
		else words.push(argv[i]);
	}
	const [action, name, credits] = words;
	if (!['add', 'list', 'jobs', 'cap', 'remove'].includes(action ?? '')) throw new SettingsError(MEMBERS_USAGE);
	if (action !== 'list' && (name === undefined || !MEMBER_NAME.test(name))) throw new SettingsError(`A member's name is 1 to 64 letters, digits, dots, dashes, underscores or @ (got "${name ?? ''}").`);
	const hours = hoursText === undefined ? 24 : Number(hoursText);
	if (!Number.isFinite(hours) || hours <= 0) throw new SettingsError(`--hours must be a number of hours above 0 (got "${hoursText}").`);
	const capOf = (text: string | undefined): SpendCap | undefined => {
		if (text === undefined || text === 'off') return undefined;
		const value = Number(text);
		if (!Number.isFinite(value) || value <= 0) throw new SettingsError(`A cap is a number of credits above 0, or off (got "${text}").`);
		return { credits: value, periodHours: hours };
	};

	const settings = readSettings(storeArgs, env);
	const store = await openStore(settings.state, say);
	try {
		const accounts = new Accounts(store);
		if (action === 'add') {
			const code = await accounts.addMember(name, capOf(capText));
			if (!code) throw new SettingsError(`${name} is a member already: \`members remove ${name}\` first to give them a new code.`);
			say(`Added ${name}. Their sign-in code (shown once; give it to them privately): ${code}`);
			log(`omni-video-mcp members: added ${name}, ${capText === undefined ? 'no cap of their own' : `cap ${describeCap(capOf(capText))}`}`);
		} else if (action === 'remove') {
			const removed = await accounts.removeMember(name);
			if (removed) log(`omni-video-mcp members: removed ${name}`);
			say(removed ? `Removed ${name}: their sign-in and tokens end now, on every replica.` : `${name} is not a member.`);
		} else if (action === 'jobs') {
			const jobs = await accounts.memberJobs(name);
			if (!jobs) throw new SettingsError(`${name} is not a member.`);
			say(`${name} made ${jobs.count} job(s)${jobs.count > jobs.latest.length ? `; the latest ${jobs.latest.length}` : ''}:`);
			for (const job of jobs.latest) say(`  ${job.jobId}  ${new Date(job.atMs).toISOString()}`);
		} else if (action === 'cap') {
			if (credits === undefined) throw new SettingsError(`members cap ${name} needs CREDITS, or off.`);
			const cap = capOf(credits);
			if (!(await accounts.capMember(name, cap))) throw new SettingsError(`${name} is not a member.`);
			log(`omni-video-mcp members: ${name}'s own cap set to ${describeCap(cap)}`);
			say(cap ? `${name} may now spend ${cap.credits} credits per ${cap.periodHours} h (beside the key's own cap, if any).` : `${name} has no cap of their own now (the key's own cap, if any, still holds).`);
		} else {
			const members = await accounts.members();
			if (members.length === 0) say('No members yet: `omni-video-mcp members add NAME`.');
			for (const { member, jobs } of members) {
				const cap = member.cap ? `cap ${member.cap.credits} credits / ${member.cap.periodHours} h` : 'no cap of their own';
				const latest = jobs.latest[0] ? `, latest ${jobs.latest[0].jobId} at ${new Date(jobs.latest[0].atMs).toISOString()}` : '';
				const apps = list<MemberSignIn>(member.apps);
				const signedIn = apps[0] ? `last sign-in ${new Date(apps[0].atMs).toISOString()} from ${apps[0].app}, apps: ${apps.map((app) => `${app.app} (${app.clientId})`).join(', ')}` : 'never signed in';
				say(`${member.name}: added ${new Date(member.addedAtMs).toISOString()}, ${cap}, ${jobs.count} job(s) made${latest}; ${signedIn}`);
			}
		}
	} finally {
		await (store as { close?: () => Promise<void> }).close?.();
	}
}

const describeCap = (cap: SpendCap | undefined): string => (cap ? `${cap.credits} credits / ${cap.periodHours} h` : 'off');
