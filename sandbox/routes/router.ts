/**
 * A route: one method and one path template, written as the OpenAPI document writes paths
 * (`/api/v1/jobs/{id}`), and what answers it. `H` is the handler's shape, which differs between the
 * API, the admin API and the file routes.
 */
export interface Route<H> {
	method: string;
	path: string;
	handle: H;
}

/** The path's segments by the template's `{names}`, still percent-encoded (handlers decide how to decode). */
export type PathParams = Record<string, string>;

/** Matches segment by segment: a `{name}` takes one non-empty segment, anything else must be equal. */
function matchPath(template: string, pathname: string): PathParams | undefined {
	const wanted = template.split('/');
	const given = pathname.split('/');
	if (wanted.length !== given.length) return undefined;
	const params: PathParams = {};
	for (let i = 0; i < wanted.length; i++) {
		const name = /^\{([^}]+)\}$/.exec(wanted[i])?.[1];
		if (name !== undefined && given[i] !== '') params[name] = given[i];
		else if (wanted[i] !== given[i]) return undefined;
	}
	return params;
}

/** The first route of the table for this method and path, with the path's parameters. */
export function findRoute<R extends Route<unknown>>(
	routes: readonly R[],
	method: string,
	pathname: string,
): { route: R; params: PathParams } | undefined {
	for (const route of routes) {
		if (route.method !== method) continue;
		const params = matchPath(route.path, pathname);
		if (params) return { route, params };
	}
	return undefined;
}
