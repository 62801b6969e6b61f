import type { z } from 'zod';
import { fromZod } from '../core/errors.js';

/** Parses a request part with its zod schema; failures become validation_failed naming the field. */
export function parse<S extends z.ZodType>(schema: S, data: unknown, part: 'body' | 'query' | 'params' | string = 'body'): z.infer<S> {
  const r = schema.safeParse(data ?? {});
  if (!r.success) throw fromZod(r.error, part === 'body' ? undefined : part);
  return r.data;
}
