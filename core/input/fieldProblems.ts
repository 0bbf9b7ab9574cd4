import { ValidationError, type FieldProblem } from '../errors/errors';

/*
 * What every input check shares: how a value is shown back to the user, and how the problems
 * found are refused together.
 */

const MAX_SHOWN_CHARS = 60;

export function isBlank(value: unknown): boolean {
	return (
		value === undefined || value === null || (typeof value === 'string' && value.trim() === '')
	);
}

/** The value as the user will recognise it in a message, cut short when long. */
export function describe(value: unknown): string {
	if (value === undefined || value === null) return 'nothing';
	if (typeof value === 'string') {
		const chars = [...value];
		return chars.length > MAX_SHOWN_CHARS
			? `"${chars.slice(0, MAX_SHOWN_CHARS - 3).join('')}..."`
			: `"${value}"`;
	}
	// JSON.stringify would show NaN and Infinity as null.
	if (typeof value === 'number' || typeof value === 'boolean') return String(value);
	let text: string;
	try {
		text = JSON.stringify(value) ?? String(value);
	} catch {
		text = String(value);
	}
	return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS - 3)}...` : text;
}

/** Throws one ValidationError naming every problem, so the user can fix them all at once. */
export function throwIfProblems(problems: FieldProblem[]): void {
	if (problems.length === 0) return;
	const message =
		problems.length === 1
			? problems[0].message
			: `${problems.length} problems: ${problems.map((p) => p.message).join(' ')}`;
	throw new ValidationError(message, problems, { code: 'invalid_request' });
}

/** Refuses a missing or non-object input (null from an expression, a string) as a user error. */
export function requireObject<T>(input: T, what: string, example: string): void {
	if (input !== null && typeof input === 'object' && !Array.isArray(input)) return;
	throwIfProblems([
		{
			field: 'input',
			value: input,
			message: `${what} needs its fields as an object, such as ${example} (got ${describe(input)}).`,
		},
	]);
}
