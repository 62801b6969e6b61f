import { Mongoose, Types, type Model, type Schema } from 'mongoose';
import { fillDefaults } from '../../../src/data/read-defaults.js';
import { UserSchema, sortKeys } from '../../../src/data/models/user.model.js';
import { RoleSchema } from '../../../src/data/models/role.model.js';
import { TenantConfigSchema } from '../../../src/data/models/tenant-config.model.js';
import { EventSchema } from '../../../src/data/models/event.model.js';
import { GroupSchema } from '../../../src/data/models/group.model.js';
import { FavouriteSchema } from '../../../src/data/models/favourite.model.js';
import { SessionSchema } from '../../../src/data/models/session.model.js';
import { OfflineTokenSchema } from '../../../src/data/models/offline-token.model.js';
import { CallRecordSchema } from '../../../src/data/models/call-record.model.js';
import { MediaFileSchema } from '../../../src/data/models/media-file.model.js';
import { DeviceSchema } from '../../../src/data/models/device.model.js';
import { BUILTIN_ROLES } from '../../../src/kernel/permissions.js';
import { defaultSettings } from '../../../src/data/tenant-defaults.js';

/**
 * An in-memory stand-in for a tenant's MongoDB database, for service tests that run without servers
 * (docs/architecture.md "Testing a rule without servers"). Each collection is driven by the product's own
 * mongoose schema, so what the fakes store is what the real repositories store:
 * - writes are cast and validated by the schema (a missing required field or a value outside an enum is
 *   the same mongoose ValidationError), with the timestamps the schema asks for;
 * - the schema's unique indexes refuse a second document with the same key with the server's duplicate
 *   key error (code 11000 with its keyPattern), which toAppError maps to `conflict` as for the real one;
 * - every read is a fresh copy that goes through the same lean-read defaults (src/data/read-defaults.ts)
 *   as the real repositories' reads, so a field absent on the server is absent here.
 * Tenants are separate databases: `FakeMongo.tenantDb(a)` never sees what `tenantDb(b)` holds.
 * The test/integration/fakes/*.contract.test.ts files run the same cases on these fakes and on the real
 * repositories against the test MongoDB-protocol server, so the two cannot drift apart.
 */

/** A document as stored (plain values, ObjectIds and Dates). */
export type Doc = Record<string, unknown>;

/** Models compiled on a mongoose instance that never connects: they cast and validate, and nothing else. */
const offline = new Mongoose({ autoIndex: false, autoCreate: false, bufferCommands: false });

const SCHEMAS = {
  User: UserSchema,
  Role: RoleSchema,
  TenantConfig: TenantConfigSchema,
  Event: EventSchema,
  Group: GroupSchema,
  Favourite: FavouriteSchema,
  Session: SessionSchema,
  OfflineToken: OfflineTokenSchema,
  CallRecord: CallRecordSchema,
  MediaFile: MediaFileSchema,
  Device: DeviceSchema,
} as const satisfies Record<string, Schema>;

export type FakeModelName = keyof typeof SCHEMAS;

/** A user written before the sort keys existed gets them from the display name (as src/data/tenant-models.ts does). */
function deriveUser(u: Doc): void {
  if (typeof u.displayName === 'string' && (u.sortName === undefined || u.initial === undefined))
    Object.assign(u, {
      ...sortKeys(u.displayName),
      ...(u.sortName !== undefined ? { sortName: u.sortName } : {}),
      ...(u.initial !== undefined ? { initial: u.initial } : {}),
    });
}

/** A deep copy that keeps ObjectIds and Dates (a lean read hands out objects of its own). */
export function copy<T>(v: T): T {
  if (v instanceof Types.ObjectId) return new Types.ObjectId(v.toHexString()) as T;
  if (v instanceof Date) return new Date(v.getTime()) as T;
  if (Array.isArray(v)) return v.map(copy) as T;
  if (v && typeof v === 'object') {
    const out: Doc = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = copy(x);
    return out as T;
  }
  return v;
}

/** Equality of stored values as the server compares them in a filter (ObjectId by id, Date by time). */
export function same(a: unknown, b: unknown): boolean {
  if (a instanceof Types.ObjectId || b instanceof Types.ObjectId) return String(a) === String(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return a === b;
}

/** Whether a stored field holds `v`: equal, or (an array field) one of its elements equals it. */
export function holds(field: unknown, v: unknown): boolean {
  return Array.isArray(field) ? field.some((x) => same(x, v)) : same(field, v);
}

/** The server's answer to a write that meets a unique index (E11000). */
export class DuplicateKeyError extends Error {
  readonly code = 11000;
  override readonly name = 'MongoServerError';
  constructor(
    collection: string,
    readonly keyPattern: Record<string, 1>,
    readonly keyValue: Record<string, unknown>,
  ) {
    super(`E11000 duplicate key error collection: ${collection} dup key: ${JSON.stringify(keyValue)}`);
  }
}

function keyOf(d: Doc, fields: string[]): string | undefined {
  const values = fields.map((f) => d[f]);
  // A multikey unique index is not used by these collections; null and missing are one key, as on the server.
  return JSON.stringify(values.map((v) => (v === undefined || v === null ? null : String(v))));
}

/** One collection of a tenant's fake database. */
export class MemoryCollection {
  private readonly docs = new Map<string, Doc>();
  private readonly model: Model<unknown>;
  private readonly uniques: string[][];

  constructor(
    readonly name: FakeModelName,
    private readonly schema: Schema,
  ) {
    this.model = offline.models[name] ?? offline.model(name, schema);
    this.uniques = schema
      .indexes()
      .filter(([, o]) => (o as { unique?: boolean }).unique)
      .map(([fields]) => Object.keys(fields));
  }

  /** Cast and validated by the schema, as `Model.create` does; throws mongoose's ValidationError. */
  private cast(input: Doc): Doc {
    const doc = new this.model(input);
    const invalid = doc.validateSync();
    if (invalid) throw invalid;
    return doc.toObject({ depopulate: true, versionKey: false }) as Doc;
  }

  private checkUnique(d: Doc, except?: string): void {
    for (const fields of this.uniques) {
      const k = keyOf(d, fields);
      for (const [id, other] of this.docs) {
        if (id === except || keyOf(other, fields) !== k) continue;
        throw new DuplicateKeyError(
          this.name,
          Object.fromEntries(fields.map((f) => [f, 1 as const])),
          Object.fromEntries(fields.map((f) => [f, d[f]])),
        );
      }
    }
  }

  /** Inserts (Model.create): cast, validated, unique keys checked; answers the stored document. */
  insert(input: Doc): Doc {
    const d = this.cast(input);
    const id = String(d._id);
    if (this.docs.has(id)) throw new DuplicateKeyError(this.name, { _id: 1 }, { _id: d._id });
    this.checkUnique(d);
    if (this.schema.get('timestamps')) {
      const now = new Date();
      d.createdAt ??= now;
      d.updatedAt ??= now;
    }
    this.docs.set(id, d);
    return copy(d);
  }

  /** A copy of a stored document as a lean read answers it (defaults filled, projection applied). */
  read(d: Doc, projection?: Record<string, 0 | 1>): Doc {
    const out = copy(d);
    if (projection) {
      const inclusive = Object.entries(projection).some(([k, v]) => k !== '_id' && v === 1);
      for (const k of Object.keys(out)) {
        if (k === '_id') continue;
        if (inclusive ? !projection[k] : projection[k] === 0) delete out[k];
      }
    }
    fillDefaults(this.schema, out, projection);
    if (this.name === 'User') deriveUser(out);
    return out;
  }

  /** Stored documents matching `pred`, in insertion order (the references: callers must not hand them out). */
  stored(pred: (d: Doc) => boolean = () => true): Doc[] {
    return [...this.docs.values()].filter(pred);
  }

  byId(id: unknown): Doc | undefined {
    return this.docs.get(String(id));
  }

  find(pred: (d: Doc) => boolean = () => true, projection?: Record<string, 0 | 1>): Doc[] {
    return this.stored(pred).map((d) => this.read(d, projection));
  }

  /**
   * Changes one stored document as an update does: the change applies to a copy, which is cast by the
   * schema and checked against the unique indexes before it replaces the stored one. Answers the
   * document before and after the change (as `returnDocument: 'before' | 'after'`).
   */
  update(d: Doc, change: (draft: Doc) => void): { before: Doc; after: Doc } {
    const id = String(d._id);
    const current = this.docs.get(id);
    if (!current) throw new Error(`fake ${this.name}: no stored document ${id}`);
    const draft = copy(current);
    change(draft);
    const next = this.cast(draft);
    this.checkUnique(next, id);
    if (this.schema.get('timestamps')) next.updatedAt = new Date();
    if (current.createdAt) next.createdAt = current.createdAt;
    this.docs.set(id, next);
    return { before: copy(current), after: copy(next) };
  }

  delete(d: Doc): void {
    this.docs.delete(String(d._id));
  }
}

/** The fake database of one tenant: its collections, made on first use. */
export class FakeTenantDb {
  private readonly collections = new Map<FakeModelName, MemoryCollection>();

  constructor(readonly tenant: string) {}

  collection(name: FakeModelName): MemoryCollection {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = new MemoryCollection(name, SCHEMAS[name])));
    return c;
  }
}

/**
 * The fake server: one database per tenant, as `Mongo.tenantDb`. A tenant is provisioned (its built-in
 * roles and its Settings document, what migrations 2 and 4 write) with `provision`.
 */
export class FakeMongo {
  private readonly dbs = new Map<string, FakeTenantDb>();

  tenantDb(tenant: string): FakeTenantDb {
    let db = this.dbs.get(tenant);
    if (!db) this.dbs.set(tenant, (db = new FakeTenantDb(tenant)));
    return db;
  }

  /** What a new tenant holds after its migrations: the built-in roles and the default Settings document. */
  provision(tenant: string, displayName = tenant): FakeTenantDb {
    const db = this.tenantDb(tenant);
    for (const [name, role] of Object.entries(BUILTIN_ROLES))
      db.collection('Role').insert({
        name,
        description: role.description,
        permissions: [...role.permissions],
        builtin: true,
      });
    db.collection('TenantConfig').insert({ ...defaultSettings(displayName) });
    return db;
  }
}
