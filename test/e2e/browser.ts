/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports -- end-to-end tooling, never shipped */
/**
 * The editor in headless Chromium (Debian's, driven by playwright-core): the nodes are found by
 * search, their parameters render with hints, the credential tests a key against the sandbox, and a
 * workflow run from the editor shows the video. Screenshots go to the cache folder; `E2E_SCREENSHOTS`
 * names another folder. With `E2E_DOCS_PICTURES=1` the shots docs/ shows are also written there, under
 * the names the docs use (docsPictures.ts): that is how the docs' editor pictures are made.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { cacheDir } from './cache';
import { DOCS_FOLDER, DOCS_PICTURES } from './docsPictures';
import { check, type Context } from './context';
import { ensureDebianPackages } from './debian';
import { OWNER } from './n8nServer';
import { onShutdown } from './processes';
import { OmniVideo } from '../../nodes/OmniVideo/OmniVideo.node';
import { typicalRenderSeconds } from '../../sandbox/renderTimes';

type RunCheck = (label: string, name: string, fn: () => Promise<string>) => Promise<void>;

const CHROMIUM = '/usr/bin/chromium';
/** What the node says it does: the sentence its page in the nodes panel must read under its name. */
const NODE_DESCRIPTION = new OmniVideo().description.description;
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export async function launchChromium(): Promise<Browser> {
	await ensureDebianPackages(['chromium'], CHROMIUM);
	const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
	onShutdown(() => browser.close());
	return browser;
}

export async function runBrowserCheck(label: string, context: Context, runCheck: RunCheck): Promise<void> {
	const shots = process.env.E2E_SCREENSHOTS || join(cacheDir(), 'screenshots', context.version);
	await mkdir(shots, { recursive: true });
	const browser = await launchChromium();
	try {
		const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
		page.setDefaultTimeout(30_000);
		const shot = async (name: string) => {
			// Panels slide in: let them settle so that the picture shows what a user sees.
			await page.waitForTimeout(800);
			await page.screenshot({ path: join(shots, `${name}.png`) });
			const docsName = DOCS_PICTURES[name];
			if (docsName && process.env.E2E_DOCS_PICTURES === '1') await copyFile(join(shots, `${name}.png`), join(DOCS_FOLDER, docsName));
		};
		await signIn(page, context);
		await runCheck(label, 'browser-trigger-found-in-trigger-panel', async () => {
			await page.goto(`${context.n8n.url}/workflow/new`);
			await page.locator('[data-test-id="canvas-add-button"]').click();
			await page.getByText('What triggers this workflow?').waitFor();
			await search(page, 'Omni Video');
			await page.locator('[data-test-id="node-creator-item-name"]', { hasText: /^Omni Video$/ }).first().click();
			await page.getByText('On job done or failed').first().waitFor();
			await shot('trigger-panel-search');
			await page.getByText('On job done or failed').first().click();
			await page.locator('[data-test-id="ndv"]').waitFor();
			await page.locator('[data-test-id="parameter-input-events"]').waitFor();
			await page.locator('[data-test-id="ndv"]').getByText(/Production URL|Webhook URLs?/i).first().waitFor();
			await shot('trigger-parameters');
			return '"What triggers this workflow?" → search "Omni Video" → On job done or failed → the trigger opens with its URL and Trigger On';
		});
		await runCheck(label, 'browser-node-found-in-nodes-panel', async () => {
			await page.goto(`${context.n8n.url}/workflow/new`);
			await page.locator('[data-test-id="canvas-add-button"]').click();
			await search(page, 'Manual');
			await page.locator('[data-test-id="node-creator-node-item"]').first().click();
			await page.keyboard.press('Escape');
			await page.locator('[data-test-id="node-creator-plus-button"]').click();
			await search(page, 'Omni Video');
			await page.locator('[data-test-id="node-creator-item-name"]', { hasText: /^Omni Video$/ }).first().click();
			await page.getByText(/Generate a video/i).first().waitFor();
			// The page heads the actions with the node's name and a sentence: n8n's editor takes that
			// sentence from the trigger of the same app when it merges the two (issue 51, part 4).
			const { sentence, lines } = await sentenceUnderName(page, 'Omni Video');
			await shot('nodes-panel-search');
			check(sentence === NODE_DESCRIPTION, `the Omni Video page reads "${sentence ?? '(nothing)'}" under the node's name, not the node's own description "${NODE_DESCRIPTION}" (the page: ${lines.slice(0, 8).join(' | ')})`);
			return `nodes panel → search "Omni Video" → the node's page reads "${sentence}" under its name, then its actions (Generate a video, …)`;
		});
		await runCheck(label, 'browser-parameters-render', async () => {
			const checked: string[] = [];
			const example = (file: string) => context.examples.find((entry) => entry.file === file)!.id;
			await page.goto(`${context.n8n.url}/workflow/${example('text-to-video-with-download.json')}`);
			await openNode(page, 'Generate Video');
			for (const name of ['resource', 'operation', 'prompt', 'source', 'resolution', 'duration', 'waitMode', 'timeoutMinutes', 'download', 'outputBinaryPropertyName']) {
				await page.locator(`[data-test-id="parameter-input-${name}"]`).waitFor();
			}
			await page.locator('[data-test-id="ndv"]').getByText('The name of the output binary field for the video file').first().waitFor();
			checked.push('Video → Generate');
			await shot('generate-parameters');
			await page.goto(`${context.n8n.url}/workflow/${example('image-upload-then-image-to-video.json')}`);
			await openNode(page, 'Upload Image');
			await page.locator('[data-test-id="parameter-input-binaryPropertyName"]').waitFor();
			checked.push('Image → Upload');
			return `${checked.join(', ')}: every field renders, with its hint`;
		});
		await runCheck(label, 'browser-credential-test', async () => {
			await page.goto(`${context.n8n.url}/home/credentials`);
			await page.getByText('Omni Video account', { exact: true }).first().click();
			const modal = page.locator('[data-test-id="editCredential-modal"]');
			await modal.waitFor();
			// Opening a saved credential tests it: the sandbox answers the key's test lookup.
			const success = modal.locator('[data-test-id="credentials-config-container-test-success"]');
			await success.waitFor({ timeout: 30_000 });
			const said = (await success.innerText()).split('\n')[0].trim();
			await shot('credential-tested');
			await page.keyboard.press('Escape');
			return `the credential form tests the key against the sandbox: "${said}"`;
		});
		await runCheck(label, 'browser-run-shows-video', async () => {
			// The example as shipped runs in npm start and on the oldest n8n; here the editor's run and its output panel.
			const evidence = await runFromEditor(page, context, await textToVideoOnSandboxScale(context));
			await shot('run-shows-video');
			return evidence;
		});
	} finally {
		await browser.close();
	}
}

/** The text-to-video example, as imported. */
export function textToVideoExample(context: Context) {
	return context.examples.find((entry) => entry.file === 'text-to-video-with-download.json')!;
}

/**
 * Runs a workflow shaped like the text-to-video example from the editor, as a person does (a manual
 * execution), and checks that the output panel plays its video.
 */
async function runFromEditor(page: Page, context: Context, workflowId: string): Promise<string> {
	await page.goto(`${context.n8n.url}/workflow/${workflowId}`);
	const started = Date.now();
	await page.locator('[data-test-id="execute-workflow-button"]').first().click();
	await page.locator('[data-test-id="canvas-node"][data-node-name="Generate Video"] [data-test-id="canvas-node-status-success"]').waitFor({ timeout: 180_000 });
	const ranMs = Date.now() - started;
	await openNode(page, 'Generate Video');
	const output = page.locator('[data-test-id="output-panel"]');
	await output.getByText(/^Binary$/).first().click().catch(() => undefined);
	await output.locator('[data-test-id="ndv-view-binary-data"], button:has-text("View")').first().click();
	const video = page.locator('video').first();
	await video.waitFor();
	await page.waitForFunction(() => (document.querySelector('video') as HTMLVideoElement | null)?.readyState ?? 0 >= 1, undefined, { timeout: 20_000 });
	const duration = await video.evaluate((element) => (element as HTMLVideoElement).duration);
	check(duration > 0, 'the video in the output panel does not load');
	return `run from the editor in ${(ranMs / 1000).toFixed(1)} s; the output panel plays the MP4 (${duration.toFixed(1)} s long)`;
}

/**
 * The text-to-video example as a copy whose Generate Video expects the render on the sandbox's
 * scale: as imported it looks its job up when a real 1080P 8 s render ends, a minute on any
 * sandbox. For a check about the editor or where a run goes, not about the example (npm start and
 * the oldest n8n's example-text-to-video run it as shipped).
 */
export async function textToVideoOnSandboxScale(context: Context): Promise<string> {
	const example = await context.n8n.workflow(textToVideoExample(context).id);
	const expectedRenderSeconds = Math.ceil(typicalRenderSeconds('1080P', 8) / context.speed);
	const nodes = example.nodes.map((node) =>
		node.name === 'Generate Video' ? { ...node, parameters: { ...node.parameters, options: { ...(node.parameters.options as object), expectedRenderSeconds } } } : node,
	);
	// Under the example's own name: the docs' picture of a run from the editor (docsPictures.ts) shows it.
	return context.n8n.createWorkflow({ name: example.name, nodes, connections: example.connections });
}

/** A manual run of `workflowId` from the editor in a browser of its own (queue mode's check). */
export async function manualRunFromEditor(context: Context, workflowId: string): Promise<string> {
	const browser = await launchChromium();
	try {
		const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
		page.setDefaultTimeout(30_000);
		await signIn(page, context);
		return await runFromEditor(page, context, workflowId);
	} finally {
		await browser.close();
	}
}

async function signIn(page: Page, context: Context): Promise<void> {
	await page.goto(`${context.n8n.url}/signin`);
	await page.locator('input[type="email"]').fill(OWNER.email);
	await page.locator('input[type="password"]').fill(OWNER.password);
	await page.locator('[data-test-id="form-submit-button"]').click();
	await page.waitForURL((url) => !url.pathname.includes('signin'), { timeout: 30_000 });
}

/**
 * The sentence the node creator's open page shows under `name`: on a community node's page, the
 * line after its name and its "Installed" badge. `lines` is the page's text, for the failure's message.
 */
async function sentenceUnderName(page: Page, name: string): Promise<{ sentence?: string; lines: string[] }> {
	await page.waitForTimeout(800);
	const lines = (await page.locator('[data-test-id="node-creator"] aside').last().innerText())
		.split('\n')
		.map((line) => line.trim())
		.filter(Boolean);
	const at = lines.indexOf(name);
	const sentence = at >= 0 ? lines.slice(at + 1).find((line) => !/^installed$/i.test(line)) : undefined;
	return { sentence, lines };
}

async function search(page: Page, text: string): Promise<void> {
	await page.locator('[data-test-id="node-creator-search-bar"]').first().fill(text);
}

async function openNode(page: Page, name: string): Promise<void> {
	await page.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`).dblclick();
	await page.locator('[data-test-id="ndv"]').waitFor();
}
