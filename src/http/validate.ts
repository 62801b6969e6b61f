import type { z } from 'zod';
import { fromZod } from '../core/errors.js';
import { refuseControlChars } from '../core/text-input.js';

/**
 * Parses a request part with its zod schema; failures become validation_failed naming the field.
 * Control characters are refused first, in any string of the part (src/core/text-input.ts).
 */
export function parse<S extends z.ZodType>(schema: S, data: unknown, part: 'body' | 'query' | 'params' | string = 'body'): z.infer<S> {
  refuseControlChars(data, part === 'body' ? undefined : part);
  const r = schema.safeParse(data ?? {});
  if (!r.success) throw fromZod(r.error, part === 'body' ? undefined : part);
  return r.data;
}
