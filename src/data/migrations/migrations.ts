import type { TenantDb } from '../mongo.js';
import { TENANT_MODEL_NAMES } from '../tenant-models.js';
import { BUILTIN_ROLES } from '../../kernel/permissions.js';
import { defaultSettings, DEFAULT_PERIPHERAL_TYPES } from '../tenant-defaults.js';
import { isDuplicateKeyOnly } from '../repositories/duplicate-keys.js';
import { bulkUpdate } from '../repositories/bulk-updates.js';
import { sortKeys } from '../models/user.model.js';
import { AuditRepository } from '../repositories/audit.repository.js';

export interface Migration {
  version: number;
  name: string;
  /** Must be idempotent: a crash between `up` and recording the version re-runs it. */
  up(db: TenantDb, ctx: { displayName: string }): Promise<void>;
}

/** Ordered, append-only. Never edit a shipped migration; add a new version. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'collections',
    async up(db) {
      for (const name of TENANT_MODEL_NAMES) await db.models[name].createCollection().catch(ignoreExists);
    },
  },
  {
    version: 2,
    name: 'builtin-roles',
    async up(db) {
      for (const [name, role] of Object.entries(BUILTIN_ROLES)) {
        await db.models.Role.updateOne(
          { name },
          { $set: { description: role.description, permissions: [...role.permissions], builtin: true } },
          { upsert: true },
        );
      }
    },
  },
  {
    version: 3,
    name: 'peripheral-types',
    async up(db) {
      for (const t of DEFAULT_PERIPHERAL_TYPES) {
        await db.models.PeripheralType.updateOne({ key: t.key }, { $setOnInsert: t }, { upsert: true });
      }
    },
  },
  {
    version: 4,
    name: 'tenant-settings',
    async up(db, ctx) {
      const { _id, ...defaults } = defaultSettings(ctx.displayName);
      await db.models.TenantConfig.updateOne({ _id }, { $setOnInsert: defaults }, { upsert: true });
    },
  },
  {
    version: 5,
    name: 'conference-bindings',
    up: backfillConferenceBindings,
  },
  {
    version: 6,
    name: 'contact-name-tokens',
    async up(db) {
      if (await backfillNameTokens(db)) await db.usersChanged('all');
    },
  },
  {
    version: 7,
    name: 'contact-sort-titles',
    async up(db) {
      if (await resortTitledNames(db)) await db.usersChanged('all');
    },
  },
  {
    version: 8,
    name: 'audit-chain',
    up: chainLegacyAudit,
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

function ignoreExists(e: { codeName?: string; code?: number }) {
  if (e?.codeName === 'NamespaceExists' || e?.code === 48) return;
  throw e;
}

/**
 * Binds every conference that has stored telemetry to the event its records name (first record
 * read wins; the ingest never let a conference name two events), for tenants whose telemetry
 * predates the conference_bindings collection. Streams the records; bindings present are kept.
 */
async function backfillConferenceBindings(db: TenantDb): Promise<void> {
  await db.models.ConferenceBinding.createCollection().catch(ignoreExists);
  const seen = new Set<string>();
  let batch: { _id: string; eventId: unknown; createdAt: Date }[] = [];
  const flush = async () => {
    if (!batch.length) return;
    const docs = batch;
    batch = [];
    await db.models.ConferenceBinding.collection.insertMany(docs as never[], { ordered: false }).catch((e) => {
      if (!isDuplicateKeyOnly(e)) throw e;
    });
  };
  const cursor = db.models.TelemetryRecord.collection.find({}, { projection: { conferenceId: 1, eventId: 1, _id: 0 } });
  for await (const r of cursor) {
    const conferenceId = String(r.conferenceId);
    if (seen.has(conferenceId)) continue;
    seen.add(conferenceId);
    batch.push({ _id: conferenceId, eventId: r.eventId, createdAt: new Date() });
    if (batch.length >= 500) await flush();
  }
  await flush();
}

/**
 * Sort key and alphabet bucket again for users whose display name starts with a title (decision 215):
 * written before titles were skipped, "Dr Alice" sorted and was filed under D. Reads the users in `_id`
 * order, NAME_TOKEN_BATCH at a time, and rewrites those whose stored key differs; idempotent.
 */
export async function resortTitledNames(db: TenantDb): Promise<number> {
  const users = db.models.User.collection;
  let after: unknown = null;
  let written = 0;
  for (;;) {
    const batch = await users
      .find((after === null ? {} : { _id: { $gt: after } }) as never, {
        projection: { _id: 1, displayName: 1, username: 1, sortName: 1, initial: 1 },
      })
      .sort({ _id: 1 })
      .limit(NAME_TOKEN_BATCH)
      .toArray();
    if (!batch.length) return written;
    after = batch[batch.length - 1]!._id;
    const changes = batch.flatMap((u) => {
      const keys = sortKeys(String(u.displayName ?? ''), String(u.username ?? ''));
      return keys.sortName === u.sortName && keys.initial === u.initial
        ? []
        : [
            {
              updateOne: {
                filter: { _id: u._id },
                update: { $set: { sortName: keys.sortName, initial: keys.initial } },
              },
            },
          ];
    });
    if (changes.length) await bulkUpdate(db.server, users, changes);
    written += changes.length;
  }
}

/** Users read and rewritten per round of the name-token backfill. */
export const NAME_TOKEN_BATCH = 500;

/**
 * Sets the search tokens (and the sort key and bucket, from the same folding) of every user that has
 * none, in `_id` order, NAME_TOKEN_BATCH at a time (decision 211). Idempotent and resumable: a user
 * once written no longer matches, so a run cut short (crash, lock lease lost) continues where it
 * stopped, and users written meanwhile by the service already carry their tokens.
 */
export async function backfillNameTokens(db: TenantDb): Promise<number> {
  const users = db.models.User.collection;
  let after: unknown = null;
  let written = 0;
  for (;;) {
    const filter =
      after === null ? { nameTokens: { $exists: false } } : { _id: { $gt: after }, nameTokens: { $exists: false } };
    const batch = await users
      .find(filter as never, { projection: { _id: 1, displayName: 1, username: 1 } })
      .sort({ _id: 1 })
      .limit(NAME_TOKEN_BATCH)
      .toArray();
    if (!batch.length) return written;
    await bulkUpdate(
      db.server,
      users,
      batch.map((u) => ({
        updateOne: {
          filter: { _id: u._id, nameTokens: { $exists: false } },
          update: { $set: sortKeys(String(u.displayName ?? ''), String(u.username ?? '')) },
        },
      })),
    );
    written += batch.length;
    after = batch[batch.length - 1]!._id;
  }
}

/**
 * Carries the entries of the audit trail written before it was chained (collection `audit`) into the
 * chain (`audit_trail`, decision 880), oldest first, each keeping its time and its old id in
 * `details.legacyId`; then removes them from `audit`. Re-runs skip entries already carried.
 */
async function chainLegacyAudit(db: TenantDb): Promise<void> {
  // The built-in admin role, stored when the tenant was made, gains the permission that reads the trail.
  await db.models.Role.updateOne({ name: 'admin', builtin: true }, { $addToSet: { permissions: 'audit:read' } });
  const legacy = db.conn.collection('audit');
  const chained = new Set(
    (
      await db.models.Audit.collection
        .find({ 'details.legacyId': { $exists: true } } as never, { projection: { 'details.legacyId': 1 } })
        .toArray()
    ).map((d) => String((d.details as { legacyId?: unknown }).legacyId)),
  );
  const trail = new AuditRepository(db);
  const carried: unknown[] = [];
  for await (const d of legacy.find({}).sort({ createdAt: 1, _id: 1 })) {
    carried.push(d._id);
    if (chained.has(String(d._id))) continue;
    const str = (v: unknown) => (v === undefined || v === null ? undefined : String(v));
    await trail.append(
      {
        action: String(d.action),
        outcome: d.outcome === 'failure' ? 'failure' : 'success',
        actorId: str(d.actorId),
        subjectId: str(d.subjectId),
        ip: str(d.ip),
        details: { ...(d.details as Record<string, unknown> | undefined), legacyId: String(d._id) },
      },
      d.createdAt instanceof Date ? d.createdAt : new Date(0),
    );
  }
  if (carried.length) await legacy.deleteMany({ _id: { $in: carried } } as never);
}
