/* eslint-disable @n8n/community-nodes/no-restricted-imports, @n8n/community-nodes/no-restricted-globals -- dev tooling, never shipped in the n8n package */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction, type ErrorObject } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

export const OPENAPI_PATH = join(__dirname, '..', 'openapi', 'omni-video.openapi.yaml');
const DOCUMENT_ID = 'omni-video-openapi';

export interface OpenApiDocument {
	paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
	components: { schemas: Record<string, unknown>; responses: Record<string, unknown> };
}

let loaded: { document: OpenApiDocument; ajv: Ajv2020 } | undefined;

/** The one contract document, parsed once, with its schemas registered for validation. */
export function openApi(): { document: OpenApiDocument; ajv: Ajv2020 } {
	if (!loaded) {
		const document = parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
		// OpenAPI adds keywords of its own (example, discriminator…): not errors for a validator.
		const ajv = new Ajv2020({ strict: false, allErrors: true });
		addFormats(ajv);
		ajv.addSchema({ $id: DOCUMENT_ID, ...document } as object);
		loaded = { document, ajv };
	}
	return loaded;
}

const compiled = new Map<string, ValidateFunction>();

/** A validator for a JSON pointer into the document, e.g. `#/components/schemas/Job`. */
export function validatorFor(pointer: string): ValidateFunction {
	let validate = compiled.get(pointer);
	if (!validate) {
		validate = openApi().ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
		compiled.set(pointer, validate);
	}
	return validate;
}

export function describeErrors(errors: ErrorObject[] | null | undefined): string {
	return (errors ?? [])
		.map((e) => `${e.instancePath || 'body'} ${e.message ?? 'is invalid'}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`)
		.join('; ');
}
