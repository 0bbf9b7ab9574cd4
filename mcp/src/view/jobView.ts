/**
 * The job view, in the host's sandboxed frame (MCP Apps). It speaks the extension's JSON-RPC over
 * postMessage itself rather than through the SDK's App class, which bundles to hundreds of KB: the
 * view needs initialize, the tool's result, the host's theme, teardown and tools/call alone. It is
 * tested against the SDK's AppBridge (test/appView.test.ts).
 */

// A module, not a script: its names stay its own under the server's typecheck.
export {};

interface Job {
	status?: string;
	jobId?: string | null;
	videoUrl?: string | null;
	progress?: number;
	creditsUsed?: number;
	creditsQueued?: number;
	createdAt?: string;
	error?: string;
	errorCode?: string;
	message?: string;
	nextStep?: { afterSeconds?: number };
	expectedInSeconds?: number;
	renderSeconds?: number;
}

interface ToolResult {
	structuredContent?: Job;
	isError?: boolean;
	content?: { type: string; text?: string }[];
}

interface HostContext {
	theme?: 'light' | 'dark';
	styles?: { variables?: Record<string, string | undefined> };
}

interface Message {
	jsonrpc?: string;
	id?: number | string;
	method?: string;
	params?: Record<string, unknown>;
	result?: unknown;
	error?: { message?: string };
}

const FOLLOW_TOOL = 'follow_job';
const PROTOCOL_VERSION = '2026-01-26';
/** A call that came back at once without the job's end (the schedule out of the plan's requests): the next waits this long at least. */
const QUIET_MS = 5_000;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const title = $('t');
const badge = $('s');
const said = $('m');
const bar = $('pw');
const progress = $<HTMLProgressElement>('p');
const eta = $('e');
const video = $<HTMLVideoElement>('v');
const details = $('d');
const actions = $('a');
const download = $<HTMLAnchorElement>('dl');
const open = $<HTMLAnchorElement>('op');
const declared: string[] = JSON.parse($('o').textContent ?? '[]');

let nextId = 1;
const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
let following: string | undefined;
let stopped = false;
let job: Job = {};
let args: Record<string, unknown> = {};
let ticker: number | undefined;
/** The expected end and the render's start on this view's clock, from the server's last answer. */
let endMs = NaN;
let startMs = NaN;

const post = (message: Message) => window.parent.postMessage({ jsonrpc: '2.0', ...message }, '*');

function request(method: string, params: Record<string, unknown>): Promise<unknown> {
	const id = nextId++;
	post({ id, method, params });
	return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

window.addEventListener('message', (event) => {
	if (event.source !== window.parent) return;
	const message = event.data as Message;
	if (message?.jsonrpc !== '2.0') return;
	if (message.method === undefined) {
		const waiting = pending.get(Number(message.id));
		pending.delete(Number(message.id));
		if (message.error) waiting?.reject(new Error(message.error.message ?? 'error'));
		else waiting?.resolve(message.result);
		return;
	}
	const params = message.params ?? {};
	if (message.method === 'ui/notifications/tool-input') args = (params.arguments as Record<string, unknown>) ?? {};
	else if (message.method === 'ui/notifications/tool-result') shown(params as ToolResult);
	else if (message.method === 'ui/notifications/host-context-changed') themed(params as HostContext);
	else if (message.method === 'ui/notifications/tool-cancelled') say('The call was cancelled.');
	else if (message.method === 'ui/resource-teardown') stopped = true;
	// A request the view does not serve is answered all the same: the host must not wait on it.
	if (message.id !== undefined) post({ id: message.id, ...(message.method === 'ui/resource-teardown' || message.method === 'ping' ? { result: {} } : { error: { message: 'Method not found' } }) } as Message);
});

function themed(context: HostContext): void {
	if (context.theme) document.documentElement.dataset.theme = context.theme;
	for (const [name, value] of Object.entries(context.styles?.variables ?? {})) if (value) document.documentElement.style.setProperty(name, value);
}

function say(text: string, failed = false): void {
	said.textContent = text;
	said.className = failed ? 'failed' : '';
}

/** A tool's result (the model's call, or the view's own): shown, then followed until the job ends. */
function shown(result: ToolResult): void {
	const next = result.structuredContent;
	if (!next) {
		say(result.content?.find((block) => block.type === 'text')?.text ?? 'No job in this result.', result.isError);
		return;
	}
	job = { ...job, ...next };
	render();
	if (job.jobId && (job.status === 'queued' || job.status === 'running') && following !== job.jobId) void follow(job.jobId);
}

async function follow(jobId: string): Promise<void> {
	following = jobId;
	// The first call answers at once, from the server's records: the expected end, for the progress shown meanwhile.
	let waitSeconds: number | undefined = 0;
	while (!stopped && following === jobId && (job.status === 'queued' || job.status === 'running')) {
		const startedMs = Date.now();
		let quietMs = 0;
		try {
			const result = (await request('tools/call', { name: FOLLOW_TOOL, arguments: { jobId, ...(waitSeconds === undefined ? {} : { waitSeconds }) } })) as ToolResult;
			if (stopped) return;
			const next = result.structuredContent;
			if (next) {
				if (next.expectedInSeconds !== undefined) {
					endMs = Date.now() + next.expectedInSeconds * 1000;
					startMs = endMs - (next.renderSeconds ?? NaN) * 1000;
				}
				job = { ...job, ...next };
				render();
			} else quietMs = QUIET_MS;
		} catch {
			quietMs = QUIET_MS;
		}
		// A wait that came back at once without the job's end: the next call waits for the look due.
		if (waitSeconds === undefined && quietMs === 0 && Date.now() - startedMs < 1_000) quietMs = Math.max(QUIET_MS, Math.min(20, job.nextStep?.afterSeconds ?? 5) * 1000);
		waitSeconds = undefined;
		if (quietMs > 0 && !stopped) await new Promise((resolve) => setTimeout(resolve, quietMs));
	}
}

function declaredOrigin(url: string): boolean {
	try {
		return declared.includes(new URL(url).origin);
	} catch {
		return false;
	}
}

function render(): void {
	const status = job.status ?? 'queued';
	title.textContent = job.jobId ? `Video job ${job.jobId}` : 'Omni Video';
	badge.textContent = { waiting_for_place: 'waiting for a place', queued: 'queued', running: 'rendering', done: 'done', failed: 'failed' }[status] ?? status;
	badge.className = `b ${status}`;
	const rendering = status === 'queued' || status === 'running';
	bar.hidden = !rendering;
	if (ticker !== undefined && !rendering) {
		clearInterval(ticker);
		ticker = undefined;
	}
	if (rendering) {
		say(status === 'queued' ? 'Queued on Omni Video: it starts as soon as the service has a place for it.' : 'Rendering on Omni Video.');
		tick();
		ticker ??= window.setInterval(tick, 1_000);
	} else if (status === 'waiting_for_place') {
		say("Not created yet: every job the plan runs at once is busy. The assistant asks again shortly; nothing is charged until then.");
	} else if (status === 'failed') {
		say(`The job failed: ${job.error ?? 'no reason given'}${job.errorCode ? ` (${job.errorCode})` : ''}. No credits are charged for it. Change what the reason names (the prompt or the source file) and ask for the video again.`, true);
	} else if (status === 'done') {
		played();
	}
}

/** Progress while rendering: the service's, else the share of the expected render time gone by. */
function tick(): void {
	let share = job.progress;
	if (share === undefined && endMs > startMs) share = Math.min(95, Math.max(0, ((Date.now() - startMs) / (endMs - startMs)) * 100));
	if (share === undefined) progress.removeAttribute('value');
	else progress.value = share;
	const left = Math.round((endMs - Date.now()) / 1000);
	eta.textContent = Number.isFinite(left) ? (left > 0 ? `Expected in about ${left} s${job.progress !== undefined ? ` · ${job.progress} %` : ''}` : 'Expected any moment now') : job.progress !== undefined ? `${job.progress} %` : '';
}

function played(): void {
	const url = job.videoUrl;
	if (!url) {
		say('Done, but the service gave no video address.');
		return;
	}
	open.href = url;
	download.href = url;
	actions.hidden = false;
	if (!declaredOrigin(url)) {
		say(`The video is ready. It is served from ${new URL(url).origin}, which this view may not load here: open it with the link below.`);
		video.hidden = true;
		return;
	}
	say('The video is ready.');
	if (video.getAttribute('src') !== url) {
		video.src = url;
		video.hidden = false;
		video.muted = true;
		video.play().catch(() => undefined);
	}
	described();
}

function described(): void {
	const parts: string[] = [];
	const seconds = Number.isFinite(video.duration) && video.duration > 0 ? video.duration : (args.duration as number | undefined);
	if (seconds) parts.push(`${Math.round(seconds * 10) / 10} s`);
	if (video.videoWidth) parts.push(`${video.videoWidth}×${video.videoHeight}`);
	else if (typeof args.resolution === 'string') parts.push(args.resolution);
	const credits = job.creditsUsed ?? job.creditsQueued;
	if (credits !== undefined) parts.push(`${credits} credits`);
	details.textContent = parts.join(' · ');
	details.hidden = parts.length === 0;
}

video.addEventListener('loadedmetadata', described);
video.addEventListener('error', () => say('The video could not be played here: open it with the link below.'));

/** Links go through the host: a sandboxed frame may not open windows or download by itself. */
function through(method: string, params: () => Record<string, unknown>) {
	return (event: Event) => {
		event.preventDefault();
		request(method, params()).catch(() => window.open((event.currentTarget as HTMLAnchorElement).href, '_blank', 'noopener'));
	};
}
open.addEventListener('click', through('ui/open-link', () => ({ url: open.href })));
download.addEventListener(
	'click',
	through('ui/download-file', () => ({ contents: [{ type: 'resource_link', uri: download.href, name: `omni-video-${job.jobId ?? 'video'}.mp4`, mimeType: 'video/mp4' }] })),
);

const main = document.querySelector('main') as HTMLElement;
new ResizeObserver(() => {
	const { width, height } = main.getBoundingClientRect();
	post({ method: 'ui/notifications/size-changed', params: { width: Math.ceil(width), height: Math.ceil(height) } });
}).observe(main);

request('ui/initialize', { appInfo: { name: 'omni-video-job-view', version: '1' }, appCapabilities: {}, protocolVersion: PROTOCOL_VERSION })
	.then((result) => {
		themed((result as { hostContext?: HostContext }).hostContext ?? {});
		post({ method: 'ui/notifications/initialized', params: {} });
	})
	.catch(() => say('The host did not answer: this view cannot show the job.', true));
