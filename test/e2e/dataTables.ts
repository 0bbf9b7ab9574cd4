/**
 * n8n's Data Tables through the editor's REST API (`/rest/projects/:projectId/data-tables`, n8n
 * 1.113 and later), in the owner's personal project: what the pipeline check and `npm start`
 * put in a fresh n8n, and how they read the rows back.
 */
import type { N8nServer } from './n8nServer';

export type ColumnType = 'string' | 'number' | 'boolean' | 'date';
export type Row = Record<string, string | number | boolean | null>;

/** The columns the pipeline template (examples/scheduled-pipeline-from-data-table.json) reads and writes. */
export const PIPELINE_COLUMNS: Array<{ name: string; type: ColumnType }> = [
	{ name: 'prompt', type: 'string' },
	{ name: 'resolution', type: 'string' },
	{ name: 'duration', type: 'number' },
	{ name: 'status', type: 'string' },
	{ name: 'takenBy', type: 'string' },
	{ name: 'takenAt', type: 'date' },
	{ name: 'jobId', type: 'string' },
	{ name: 'videoUrl', type: 'string' },
	{ name: 'creditsUsed', type: 'number' },
	{ name: 'error', type: 'string' },
];

/** The table name the template looks its table up by. */
export const PIPELINE_TABLE = 'Omni Video prompts';

export interface DataTable {
	id: string;
	name: string;
	base: string;
}

async function personalProject(n8n: N8nServer): Promise<string> {
	return (await n8n.rest<{ id: string }>('GET', '/projects/personal')).id;
}

export async function createDataTable(n8n: N8nServer, name: string, columns = PIPELINE_COLUMNS): Promise<DataTable> {
	const base = `/projects/${await personalProject(n8n)}/data-tables`;
	const created = await n8n.rest<{ id: string }>('POST', base, { name, columns });
	return { id: created.id, name, base: `${base}/${created.id}` };
}

export async function insertRows(n8n: N8nServer, table: DataTable, rows: Row[]): Promise<void> {
	await n8n.rest('POST', `${table.base}/insert`, { data: rows, returnType: 'count' });
}

/** Every row of the table, by id. */
export async function rowsOf(n8n: N8nServer, table: DataTable): Promise<Array<Row & { id: number }>> {
	const page = await n8n.rest<{ data: Array<Row & { id: number }> }>('GET', `${table.base}/rows?take=1000&skip=0`);
	return [...page.data].sort((a, b) => a.id - b.id);
}

/** A workflow's Data Table nodes pointed at the table `tableId` (the examples ship with none picked). */
export function withDataTable<T extends { nodes: Array<{ type: string; parameters: Record<string, unknown> }> }>(workflow: T, tableId: string): T {
	for (const node of workflow.nodes) if (node.type === 'n8n-nodes-base.dataTable') node.parameters.dataTableId = { __rl: true, mode: 'id', value: tableId };
	return workflow;
}
