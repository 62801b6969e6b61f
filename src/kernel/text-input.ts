import { AppError } from './errors.js';

/**
 * C0 control characters other than tab, line feed and carriage return, and DEL. MongoDB cannot take a
 * NUL in a regex or a key, terminals and log viewers act on the others, and no text field of the
 * service has a use for them. Also unpaired UTF-16 surrogates: not text, and stored as U+FFFD by
 * MongoDB's UTF-8, so an accepted value would not read back as it was sent.
 */
const CONTROL =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Nesting beyond this is refused by every schema anyway; the walk stops there instead of recursing. */
const MAX_DEPTH = 64;

/**
 * Every character CONTROL can match, in one class: a string without any is clean without the
 * lookaround (most input; a valid surrogate pair, such as an emoji, still takes the full test).
 */
const SUSPECT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uD800-\uDFFF]/;

function controlled(s: string): boolean {
  return SUSPECT.test(s) && CONTROL.test(s);
}

/** Whether any string (value or key) in `value` holds a control character: the walk without paths. */
function holdsControl(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return controlled(value);
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH || Buffer.isBuffer(value)) return false;
  for (const key of Object.keys(value)) {
    if (controlled(key) || holdsControl((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/** The path of the first string (value or key) in `value` that holds a control character, if any. */
export function controlCharPath(value: unknown, prefix?: string): string | undefined {
  // Clean input (nearly all of it) is walked once, without building a path per field (B1's profile).
  if (!holdsControl(value, 0)) return undefined;
  const stack: [unknown, string, number][] = [[value, prefix ?? '', 0]];
  while (stack.length) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (CONTROL.test(v)) return path || '(value)';
      continue;
    }
    if (v === null || typeof v !== 'object' || depth >= MAX_DEPTH || Buffer.isBuffer(v)) continue;
    for (const [k, child] of Object.entries(v)) {
      const at = path ? `${path}.${k}` : k;
      if (CONTROL.test(k)) return at;
      stack.push([child, at, depth + 1]);
    }
  }
  return undefined;
}

/**
 * Refuses text input with control characters as `validation_failed` naming the field, before it
 * reaches a schema, a query or a log line. Every transport calls it on what it parses: REST params,
 * query and body (src/http/validate.ts), multipart fields, GraphQL variables and literals, hub args.
 */
export function refuseControlChars(value: unknown, prefix?: string): void {
  const field = controlCharPath(value, prefix);
  if (field === undefined) return;
  const message = 'must not contain control characters';
  throw new AppError('validation_failed', `${field}: ${message}`, { errors: [{ field, message }] });
}
