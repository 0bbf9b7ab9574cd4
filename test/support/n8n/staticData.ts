import type { IDataObject, IWorkflowBase } from 'n8n-workflow';

/*
 * A workflow's static data as LiveWebhooks handles it: each call builds the workflow from the
 * stored row (its own copy of the static data) and saves the static data back once webhook() has
 * run, so two calls at once each read what was stored before either of them.
 */

/** The stored workflow with its own copy of the static data, as a call reads it. */
export function withStoredStaticData(workflowData: IWorkflowBase): IWorkflowBase {
	const stored = JSON.parse(JSON.stringify(workflowData.staticData ?? {})) as IDataObject;
	return { ...workflowData, staticData: stored };
}

/**
 * Saves the static data a call or a run used back when a node changed it, as n8n does after
 * webhook() and after a run (n8n's ObservableObject marks the object it wraps `__dataChanged`).
 */
export function saveStaticData(workflowData: IWorkflowBase, staticData: IDataObject | undefined): void {
	if (staticData?.__dataChanged !== true) return;
	const saved = JSON.parse(JSON.stringify(staticData)) as IDataObject;
	delete saved.__dataChanged;
	workflowData.staticData = saved;
}
