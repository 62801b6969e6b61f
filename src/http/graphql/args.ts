type Args = Record<string, unknown>;

/** GraphQL passes explicit nulls for omitted optional arguments; zod defaults apply to undefined only. */
export function withoutNulls(o: Args): Args {
  const out: Args = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null || v === undefined) continue;
    out[k] = v && typeof v === 'object' && !Array.isArray(v) ? withoutNulls(v as Args) : v;
  }
  return out;
}
