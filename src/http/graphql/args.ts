import type { z } from 'zod';
import { fromZod } from '../../kernel/errors.js';

/** GraphQL passes explicit nulls for omitted optional arguments; zod defaults apply to undefined only. */
export function withoutNulls(o: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null || v === undefined) continue;
    out[k] = v && typeof v === 'object' && !Array.isArray(v) ? withoutNulls(v) : v;
  }
  return out;
}

/** Nullable fields of T that can be absent or null. */
type NullableKeys<T> = { [K in keyof T]-?: null extends T[K] ? K : undefined extends T[K] ? K : never }[keyof T];

/** What withoutNulls makes of a resolver's arguments (typed from the SDL): optional fields absent instead of null. */
export type WithoutNulls<T> = {
  [K in Exclude<keyof T, NullableKeys<T>>]: NonNullable<T[K]> extends object ? WithoutNulls<T[K]> : T[K];
} & {
  [K in NullableKeys<T>]?: NonNullable<T[K]> extends object ? WithoutNulls<NonNullable<T[K]>> : NonNullable<T[K]>;
};

/**
 * The compiler's check that a request schema takes a resolver's arguments as the SDL declares them:
 * every argument's type is one the schema accepts, and the schema reads every argument (zod would drop
 * one it does not know). `unknown` when it fits; otherwise a type naming what does not fit.
 */
export type Fits<Args, S extends z.ZodType> = [WithoutNulls<Args>] extends [z.input<S>]
  ? [Exclude<keyof Args, keyof z.input<S>>] extends [never]
    ? unknown
    : { argumentsTheSchemaDropsFromTheSdl: Exclude<keyof Args, keyof z.input<S>> }
  : { argumentsTheSdlDeclaresThatTheSchemaRefuses: WithoutNulls<Args> };

/** Validates a resolver's arguments with a request schema (the hub's or REST's), nulls dropped; `field` prefixes error fields. */
export function parseArgs<Args extends object, S extends z.ZodType>(
  schema: S & Fits<Args, S>,
  args: Args,
  field?: string,
): z.output<S> {
  return parseUnchecked(schema, args, field);
}

/** parseArgs for a generic caller that makes the Fits check at its own signature. */
export function parseUnchecked<S extends z.ZodType>(schema: S, args: object, field?: string): z.output<S> {
  const parsed = schema.safeParse(withoutNulls(args));
  if (!parsed.success) throw fromZod(parsed.error, field);
  return parsed.data;
}
