import type { TradeoffPoint } from './tradeoff';

const COLORS: Record<string, string> = { Pro: '#3b6fd8', Premium: '#e08a2c' };
const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The axes' ranges: points beyond them sit on the edge, marked with their values. */
const X = { min: 1.5, max: 6 };
const Y = { min: 0.95, max: 1.5 };

/** A marker per family: core without progress (circle), with progress (square), naive loops (triangle, diamond). */
function marker(family: TradeoffPoint['family'], x: number, y: number, color: string): string {
	switch (family) {
		case 'core':
			return `<circle cx="${x}" cy="${y}" r="4" fill="${color}"/>`;
		case 'oracle':
			return `<circle cx="${x}" cy="${y}" r="4" fill="#fff" stroke="${color}" stroke-width="1.5"/>`;
		case 'core+progress':
			return `<rect x="${x - 4}" y="${y - 4}" width="8" height="8" fill="none" stroke="${color}" stroke-width="1.5"/>`;
		case 'naive':
			return `<path d="M${x} ${y - 5} L${x + 5} ${y + 4} L${x - 5} ${y + 4} Z" fill="none" stroke="${color}" stroke-width="1.5"/>`;
		default:
			return `<path d="M${x} ${y - 5} L${x + 5} ${y} L${x} ${y + 5} L${x - 5} ${y} Z" fill="none" stroke="${color}" stroke-width="1.5"/>`;
	}
}

/**
 * Wall ÷ limit against requests a job, one panel per render-time distribution, one colour per
 * plan: core's schedule at several look costs (joined, in order of requests), with progress, and
 * the naive loops; the target's corner shaded.
 */
export function tradeoffChart(points: TradeoffPoint[], target: { ratio: number; perJob: number }, subtitle: string): string {
	const distributions = [...new Set(points.map((p) => p.distribution))];
	const [panelWidth, panelHeight, left, top] = [420, 300, 50, 80];
	const width = left + distributions.length * (panelWidth + 60) + 20;
	const height = top + panelHeight + 90;
	const parts: string[] = [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
		`<rect width="100%" height="100%" fill="#fff"/>`,
		`<text x="10" y="20" font-size="15" font-weight="bold">Polling: wall time ÷ the plan’s limit against requests per job (50 jobs)</text>`,
		`<text x="10" y="38" fill="#555">${esc(subtitle)}</text>`,
		`<text x="10" y="56" fill="#555">● core, learned schedule, no progress (joined by look cost)   ○ the same knowing the distribution (dashed)   □ core with progress reported   △ naive loop, plan’s jobs at once   ◇ naive loop, every row at once   shaded: the target</text>`,
	];
	distributions.forEach((distribution, d) => {
		const x0 = left + d * (panelWidth + 60);
		const sx = (v: number) => x0 + ((Math.min(Math.max(v, X.min), X.max) - X.min) / (X.max - X.min)) * panelWidth;
		const sy = (v: number) => top + panelHeight - ((Math.min(Math.max(v, Y.min), Y.max) - Y.min) / (Y.max - Y.min)) * panelHeight;
		parts.push(`<text x="${x0}" y="${top - 8}" font-weight="bold">${esc(distribution)} render times</text>`);
		parts.push(`<rect x="${sx(X.min)}" y="${sy(target.ratio)}" width="${sx(target.perJob) - sx(X.min)}" height="${sy(Y.min) - sy(target.ratio)}" fill="#d8f0d8"/>`);
		parts.push(`<rect x="${x0}" y="${top}" width="${panelWidth}" height="${panelHeight}" fill="none" stroke="#999"/>`);
		for (let v = 2; v <= X.max; v++) {
			parts.push(`<line x1="${sx(v)}" y1="${top + panelHeight}" x2="${sx(v)}" y2="${top + panelHeight + 4}" stroke="#999"/><text x="${sx(v) - 3}" y="${top + panelHeight + 16}">${v}</text>`);
		}
		for (let v = 1; v <= Y.max + 1e-9; v += 0.1) {
			parts.push(`<line x1="${x0 - 4}" y1="${sy(v)}" x2="${x0}" y2="${sy(v)}" stroke="#999"/><text x="${x0 - 34}" y="${sy(v) + 4}">${v.toFixed(1)}×</text>`);
		}
		parts.push(`<line x1="${x0}" y1="${sy(1)}" x2="${x0 + panelWidth}" y2="${sy(1)}" stroke="#c00" stroke-dasharray="3,3"/>`);
		parts.push(`<text x="${x0 + panelWidth / 2 - 40}" y="${top + panelHeight + 32}">requests per job</text>`);
		for (const plan of [...new Set(points.map((p) => p.plan))]) {
			const color = COLORS[plan] ?? '#888';
			const mine = points.filter((p) => p.distribution === distribution && p.plan === plan);
			const curve = mine.filter((p) => p.family === 'core').sort((a, b) => a.perJob - b.perJob);
			if (curve.length > 1) parts.push(`<polyline points="${curve.map((p) => `${sx(p.perJob)},${sy(p.ratio)}`).join(' ')}" fill="none" stroke="${color}"/>`);
			const oracle = mine.filter((p) => p.family === 'oracle').sort((a, b) => a.perJob - b.perJob);
			if (oracle.length > 1) parts.push(`<polyline points="${oracle.map((p) => `${sx(p.perJob)},${sy(p.ratio)}`).join(' ')}" fill="none" stroke="${color}" stroke-dasharray="4,3"/>`);
			for (const p of mine) {
				parts.push(marker(p.family, sx(p.perJob), sy(p.ratio), color));
				const off = p.perJob > X.max || p.ratio > Y.max;
				if (off) parts.push(`<text x="${sx(p.perJob) - 70}" y="${sy(p.ratio) + 14}" font-size="9" fill="${color}">${esc(`${plan}: ${p.ratio.toFixed(2)}×, ${p.perJob.toFixed(1)}/job`)}</text>`);
			}
		}
		parts.push(`<rect x="${x0 + panelWidth - 80}" y="${top + 6}" width="8" height="8" fill="${COLORS.Pro}"/><text x="${x0 + panelWidth - 68}" y="${top + 14}">Pro</text>`);
		parts.push(`<rect x="${x0 + panelWidth - 80}" y="${top + 20}" width="8" height="8" fill="${COLORS.Premium}"/><text x="${x0 + panelWidth - 68}" y="${top + 28}">Premium</text>`);
	});
	parts.push(`<text x="10" y="${height - 12}" fill="#555" font-size="10">Counts from the sandbox's journal; times on the sandbox's clock. Points beyond the axes sit on the edge with their values.</text>`);
	parts.push('</svg>');
	return `${parts.join('\n')}\n`;
}
