import type { z } from 'zod';
import { fromZod } from '../kernel/errors.js';
import { refuseControlChars } from '../kernel/text-input.js';

/**
 * Parses a request part with its zod schema; failures become validation_failed naming the field.
 * Control characters are refused in any string the schema keeps (src/kernel/text-input.ts). In a valid
 * request, fields the schema does not know are dropped unread whatever they hold (the OpenAPI document
 * allows extra fields); in a refused one, a control character anywhere is named first.
 */
export function parse<S extends z.ZodType>(
  schema: S,
  data: unknown,
  part: 'body' | 'query' | 'params' | string = 'body',
): z.infer<S> {
  const prefix = part === 'body' ? undefined : part;
  const r = schema.safeParse(data ?? {});
  if (!r.success) {
    // A refused request names a control character first, wherever it is, then what the schema found.
    refuseControlChars(data, prefix);
    throw fromZod(r.error, prefix);
  }
  refuseControlChars(r.data, prefix);
  return r.data;
}
