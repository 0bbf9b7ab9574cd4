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
	{ name: 'failures', type: 'number' },
];

/** The columns of the template's batches: one record a batch that ended (a tick's rows). */
export const BATCH_COLUMNS: Array<{ name: string; type: ColumnType }> = [
	{ name: 'batch', type: 'string' },
	{ name: 'endedOn', type: 'string' },
	{ name: 'done', type: 'number' },
	{ name: 'failed', type: 'number' },
	{ name: 'retried', type: 'number' },
	{ name: 'credits', type: 'number' },
	{ name: 'creditsPerSecond', type: 'string' },
];

/** The columns of the template's daily summary, one row a day. */
export const SUMMARY_COLUMNS: Array<{ name: string; type: ColumnType }> = [
	{ name: 'day', type: 'string' },
	{ name: 'done', type: 'number' },
	{ name: 'failed', type: 'number' },
	{ name: 'retried', type: 'number' },
	{ name: 'credits', type: 'number' },
	{ name: 'creditBudget', type: 'number' },
];

/** The table names the template looks its tables up by. */
export const PIPELINE_TABLE = 'Omni Video prompts';
export const BATCH_TABLE = 'Omni Video batches';
export const SUMMARY_TABLE = 'Omni Video daily summary';

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

/** Sets `data` on the rows whose `column` equals `value`. */
export async function updateRows(n8n: N8nServer, table: DataTable, where: { column: string; value: string | number }, data: Row): Promise<void> {
	await n8n.rest('PATCH', `${table.base}/rows`, { filter: { type: 'and', filters: [{ columnName: where.column, condition: 'eq', value: where.value }] }, data });
}

/** Every row of the table, by id. */
export async function rowsOf(n8n: N8nServer, table: DataTable): Promise<Array<Row & { id: number }>> {
	const page = await n8n.rest<{ data: Array<Row & { id: number }> }>('GET', `${table.base}/rows?take=1000&skip=0`);
	return [...page.data].sort((a, b) => a.id - b.id);
}

/**
 * A workflow's Data Table nodes pointed at the tables' ids, by the name each node shows (the
 * examples ship with none picked): `tableIds` maps the tables' names to ids.
 */
export function withDataTables<T extends { nodes: Array<{ name?: string; type: string; parameters: Record<string, unknown> }> }>(workflow: T, tableIds: Record<string, string>): T {
	for (const node of workflow.nodes) {
		if (node.type !== 'n8n-nodes-base.dataTable') continue;
		const name = (node.parameters.dataTableId as { cachedResultName?: string } | undefined)?.cachedResultName ?? '';
		if (!tableIds[name]) throw new Error(`no table given for ${node.name ?? 'a Data Table node'}'s "${name}"`);
		node.parameters.dataTableId = { __rl: true, mode: 'id', value: tableIds[name] };
	}
	return workflow;
}

/** The pipeline's three tables, made empty: the prompts (named `name`), its batches and its daily summary. */
export async function createPipelineTables(n8n: N8nServer, name = PIPELINE_TABLE): Promise<{ prompts: DataTable; batches: DataTable; summary: DataTable; ids: Record<string, string> }> {
	const named = (table: string, suffix: string) => (name === PIPELINE_TABLE ? table : `${name} ${suffix}`);
	const prompts = await createDataTable(n8n, name);
	const batches = await createDataTable(n8n, named(BATCH_TABLE, 'batches'), BATCH_COLUMNS);
	const summary = await createDataTable(n8n, named(SUMMARY_TABLE, 'summary'), SUMMARY_COLUMNS);
	return { prompts, batches, summary, ids: { [PIPELINE_TABLE]: prompts.id, [BATCH_TABLE]: batches.id, [SUMMARY_TABLE]: summary.id } };
}
