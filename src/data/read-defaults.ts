import type { Schema, SchemaType } from 'mongoose';

type Doc = Record<string, unknown>;
type Projection = Record<string, unknown> | null | undefined;

const QUERY_HOOKS = ['find', 'findOne', 'findOneAndUpdate', 'findOneAndReplace', 'findOneAndDelete'] as const;
const patched = new WeakSet<Schema>();

/** The value a path would get on a new document, or undefined when it has no default. */
function defaultOf(type: SchemaType, doc: Doc): unknown {
  // `default: undefined` written in the schema means "absent stays absent": a session's permission cap,
  // whose absence (a root session: the role decides) differs from an empty cap (no permission at all).
  if (Object.hasOwn(type.options as object, 'default') && (type.options as { default?: unknown }).default === undefined)
    return undefined;
  const d = (type as unknown as { defaultValue?: unknown }).defaultValue;
  const isArray = type.instance === 'Array';
  if (d === undefined) return isArray ? [] : undefined;
  const v = typeof d === 'function' ? (d as (this: Doc) => unknown).call(doc) : d;
  // An array default is built as a MongooseArray by some schema types: a plain array is what lean reads carry.
  return Array.isArray(v) ? [...v] : v;
}

/** Whether a top-level field comes back under `projection` (inclusive or exclusive). */
function selected(projection: Projection, top: string): boolean {
  if (!projection) return true;
  const entries = Object.entries(projection).filter(([k]) => k !== '_id');
  if (entries.length === 0) return true;
  const inclusive = entries.some(([, v]) => v === 1 || v === true);
  const hit = entries.find(([k]) => k === top || k.startsWith(`${top}.`));
  return inclusive ? !!hit : !hit || (hit[1] !== 0 && hit[1] !== false);
}

/** A document without its timestamps (a raw seed) dates from its ObjectId, which records when it was made. */
function fillTimestamps(schema: Schema, doc: Doc, projection?: Projection): void {
  if (!schema.get('timestamps')) return;
  const id = doc._id as { getTimestamp?: () => Date } | undefined;
  if (typeof id?.getTimestamp !== 'function') return;
  if (doc.createdAt == null && selected(projection, 'createdAt')) doc.createdAt = id.getTimestamp();
  if (doc.updatedAt == null && selected(projection, 'updatedAt')) doc.updatedAt = doc.createdAt ?? id.getTimestamp();
}

/** Fills, in place, the fields a document written by older code or a seed lacks, as a new one would have them. */
export function fillDefaults(schema: Schema, doc: Doc, projection?: Projection): void {
  schema.eachPath((path, type) => {
    if (path === '_id' || path === '__v' || path.includes('.')) return;
    if (!selected(projection, path)) return;
    const current = doc[path];
    if (current === undefined || (current === null && type.instance === 'Array')) {
      const v = defaultOf(type, doc);
      if (v !== undefined) doc[path] = v;
      return;
    }
    // Sub-documents of a document array get their own defaults (e.g. a participant's role).
    const sub = (type as unknown as { schema?: Schema }).schema;
    if (sub && Array.isArray(current))
      for (const el of current) if (el && typeof el === 'object') fillDefaults(sub, el as Doc);
  });
}

/**
 * Reads with `.lean()` skip mongoose's defaults, so a document written before a field existed (or by a
 * seed that left out an optional array) reached presenters with `undefined` where they expect `[]`.
 * This normalises every lean read of the schema at the data layer, once, instead of a `?? []` in each
 * reader: missing fields get the schema's default, arrays at least `[]`, respecting the projection.
 * `derive` fills fields computed from others (a user's sort keys from the display name).
 */
export function withReadDefaults(schema: Schema, derive?: (doc: Doc) => void): void {
  if (patched.has(schema)) return;
  patched.add(schema);
  for (const hook of QUERY_HOOKS) {
    schema.post(
      hook,
      function (this: { mongooseOptions(): { lean?: unknown }; projection(): Projection }, res: unknown) {
        if (!this.mongooseOptions().lean || !res) return;
        const projection = this.projection();
        for (const doc of Array.isArray(res) ? res : [res]) {
          if (!doc || typeof doc !== 'object') continue;
          fillDefaults(schema, doc as Doc, projection);
          fillTimestamps(schema, doc as Doc, projection);
          derive?.(doc as Doc);
        }
      },
    );
  }
}
