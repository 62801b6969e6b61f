import { Types, type Schema, type SchemaType } from 'mongoose';

/**
 * Builds a valid document for any mongoose schema from its declared paths, so every model of the
 * tenant database (including ones added later) gets a CRUD round trip without a hand-written
 * fixture. Unique fields get distinct values per call (`seq`), which the duplicate-key tests rely on.
 */
export function sampleDoc(schema: Schema, seq: number): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  schema.eachPath((path, type) => {
    if (path === '__v' || path === 'createdAt' || path === 'updatedAt') return;
    if (path === '_id' && type.instance === 'ObjectId') return;
    const required = Boolean((type as SchemaType & { isRequired?: boolean }).isRequired) || path === '_id';
    if (!required) return;
    setPath(doc, path, sampleValue(path, type, seq));
  });
  return doc;
}

function sampleValue(path: string, type: SchemaType, seq: number): unknown {
  const enumValues = (type as SchemaType & { enumValues?: string[] }).enumValues;
  switch (type.instance) {
    case 'String':
      return enumValues?.length ? enumValues[0] : `${path.replace(/\W/g, '-').toLowerCase()}-${seq}`;
    case 'Number':
      return seq;
    case 'Date':
      return new Date(Date.UTC(2030, 0, 1, 0, 0, seq % 60));
    case 'Boolean':
      return true;
    case 'ObjectId':
      return new Types.ObjectId();
    case 'Mixed':
      return { sample: seq };
    case 'Array': {
      const inner = (type as SchemaType & { embeddedSchemaType?: SchemaType }).embeddedSchemaType;
      return inner && inner.instance !== 'Embedded' ? [sampleValue(path, inner, seq)] : [];
    }
    default:
      return `${path}-${seq}`;
  }
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = target;
  for (const p of parts.slice(0, -1)) cur = (cur[p] ??= {}) as Record<string, unknown>;
  cur[parts[parts.length - 1]!] = value;
}

/** The first required string path that is not unique and not an enum: what the update step changes. */
export function mutablePath(schema: Schema): string | undefined {
  let found: string | undefined;
  schema.eachPath((path, type) => {
    const t = type as SchemaType & {
      isRequired?: boolean;
      enumValues?: string[];
      options: { unique?: boolean; lowercase?: boolean };
    };
    if (found || path === '_id' || !t.isRequired || t.instance !== 'String') return;
    if (t.options.unique || t.enumValues?.length) return;
    found = path;
  });
  return found;
}

export function getPath(doc: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((cur, p) => (cur as Record<string, unknown> | undefined)?.[p], doc);
}

export type IndexKey = Record<string, 1 | -1>;

/** A stable text form of an index key, for comparing schema declarations with listIndexes. */
export function keyOf(key: Record<string, unknown>): string {
  return Object.entries(key)
    .map(([k, v]) => `${k}:${Number(v)}`)
    .join(',');
}
