import type { BatchResult } from './measure';

const COLORS: Record<string, string> = {
	Pro: '#3b6fd8',
	'Pro, uniform': '#3b6fd8',
	'Pro, log-normal': '#9bb5ea',
	Premium: '#e08a2c',
	'Premium, uniform': '#e08a2c',
	'Premium, log-normal': '#f2c28f',
};
/** One bar per plan and render-time distribution. */
const seriesOf = (r: BatchResult) => (r.distribution ? `${r.plan}, ${r.distribution}` : r.plan);
const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface Panel {
	title: string;
	value: (result: BatchResult) => number;
	format: (value: number) => string;
	/** The left end of the (logarithmic) axis. */
	floor: number;
	/** A dashed line at a reference value. */
	mark?: { at: number; label: string };
}

/**
 * A plain SVG of the side-by-side runs: one panel per measure, one row per strategy, one bar per
 * plan, on logarithmic axes (the naive loops and the n8n batch are orders of magnitude apart from
 * core), each bar labelled with its value.
 */
export function sideBySideChart(results: BatchResult[], subtitle: string): string {
	const panels: Panel[] = [
		{ title: 'Wall time ÷ the plan’s physical limit', value: (r) => r.wallMs / r.limitMs, format: (v) => `${v.toFixed(2)}×`, floor: 0.8, mark: { at: 1, label: 'limit' } },
		{ title: 'API requests per job', value: (r) => r.apiRequests / r.jobs, format: (v) => v.toFixed(2), floor: 0.5, mark: { at: 1, label: '1' } },
		{ title: 'Job end → client knows, median', value: (r) => r.knownDelayMedianMs / 1000, format: (v) => `${v.toFixed(1)} s`, floor: 0.05 },
	];
	const strategies = [...new Set(results.map((r) => r.strategy))];
	const plans = [...new Set(results.map(seriesOf))];
	const labelWidth = 290;
	const panelWidth = 300;
	const barHeight = 11;
	const rowHeight = plans.length * barHeight + 8;
	const chartTop = 70;
	const height = chartTop + strategies.length * rowHeight + 40;
	const width = labelWidth + panels.length * (panelWidth + 20) + 10;
	const parts: string[] = [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
		`<rect width="100%" height="100%" fill="#fff"/>`,
		`<text x="10" y="20" font-size="15" font-weight="bold">npm run bench: 50 text-to-video jobs, side by side</text>`,
		`<text x="10" y="38" fill="#555">${esc(subtitle)}</text>`,
	];
	plans.forEach((plan, i) => {
		parts.push(`<rect x="${10 + i * 150}" y="48" width="10" height="10" fill="${COLORS[plan] ?? '#888'}"/><text x="${24 + i * 150}" y="57">${esc(plan)}</text>`);
	});
	strategies.forEach((strategy, row) => {
		const y = chartTop + row * rowHeight;
		parts.push(`<text x="10" y="${y + rowHeight / 2 + 2}">${esc(strategy)}</text>`);
	});
	panels.forEach((panel, p) => {
		const x0 = labelWidth + p * (panelWidth + 20);
		const end = Math.max(panel.floor * 10, ...results.map(panel.value).filter(Number.isFinite)) * 1.1;
		const scale = (value: number) => (Math.log(Math.max(value, panel.floor) / panel.floor) / Math.log(end / panel.floor)) * (panelWidth - 70);
		parts.push(`<text x="${x0}" y="${chartTop - 8}" font-weight="bold">${esc(panel.title)} (log)</text>`);
		parts.push(`<line x1="${x0}" y1="${chartTop - 2}" x2="${x0}" y2="${chartTop + strategies.length * rowHeight}" stroke="#999"/>`);
		if (panel.mark) {
			const mx = x0 + scale(panel.mark.at);
			parts.push(`<line x1="${mx}" y1="${chartTop - 2}" x2="${mx}" y2="${chartTop + strategies.length * rowHeight}" stroke="#c00" stroke-dasharray="3,3"/>`);
			parts.push(`<text x="${mx + 2}" y="${chartTop + strategies.length * rowHeight + 12}" fill="#c00">${esc(panel.mark.label)}</text>`);
		}
		strategies.forEach((strategy, row) => {
			plans.forEach((plan, i) => {
				const result = results.find((r) => r.strategy === strategy && seriesOf(r) === plan);
				if (!result) return;
				const value = panel.value(result);
				const y = chartTop + row * rowHeight + i * barHeight + 4;
				const w = Number.isFinite(value) ? scale(value) : 0;
				parts.push(`<rect x="${x0}" y="${y}" width="${w.toFixed(1)}" height="${barHeight - 2}" fill="${COLORS[plan] ?? '#888'}"/>`);
				const label = Number.isFinite(value) ? panel.format(value) : 'n/a';
				parts.push(`<text x="${(x0 + w + 3).toFixed(1)}" y="${y + barHeight - 3}" font-size="9">${esc(label)}</text>`);
			});
		});
	});
	parts.push(`<text x="10" y="${height - 10}" fill="#555" font-size="10">Counts from the sandbox's journal and job store; times on the sandbox's clock. Logarithmic axes.</text>`);
	parts.push('</svg>');
	return `${parts.join('\n')}\n`;
}
