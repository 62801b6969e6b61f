import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Model } from 'mongoose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { TENANT_MODEL_NAMES, type TenantModels } from '../../../src/data/tenant-models.js';
import type { TenantDb } from '../../../src/data/mongo.js';
import { toAppError } from '../../../src/kernel/errors.js';
import { sampleDoc, mutablePath, getPath, keyOf } from './fixtures.js';

/**
 * Indexes the queries of each collection rely on (contact search, event lists, idempotency keys,
 * natural keys). `!` marks a unique index. Kept by hand so that dropping an index a query needs
 * fails here even when the schema no longer declares it.
 */
const QUERY_INDEXES: Partial<Record<keyof TenantModels, string[]>> = {
  User: [
    '!username:1',
    '!idpSubject:1',
    'sortName:1,_id:1',
    'initial:1,sortName:1',
    'status:1,sortName:1',
    'nameTokens:1',
  ],
  Role: ['!name:1'],
  Event: [
    '!meetingCode:1',
    'participantIds:1,startAt:-1,_id:-1',
    'organizerId:1,startAt:-1,_id:-1',
    'deviceIds:1,startAt:-1,_id:-1',
    'status:1,startAt:1',
    'nameLower:1',
  ],
  PeripheralType: ['!key:1'],
  Device: ['!fingerprint:1', '!deviceKeyHash:1', 'ownerUserId:1', 'typeId:1'],
  Group: ['ownerId:1,name:1', 'participantIds:1'],
  Favourite: ['!userId:1,contactId:1'],
  Notice: ['current:1,createdAt:-1'],
  NoticeAck: ['!noticeId:1,userId:1'],
  MediaFile: ['!clientRef:1', 'eventId:1,createdAt:-1', 'hash:1', 'ownerId:1,createdAt:-1'],
  FileShare: ['!path:1', 'mediaFileId:1'],
  PendingUser: ['!username:1', 'importId:1,rowNumber:1'],
  Session: ['!refreshHash:1', 'userId:1,revokedAt:1', 'previousHashes:1'],
  LoginCode: ['!code:1'],
  OfflineToken: ['!tokenHash:1', 'userId:1,purpose:1'],
  Audit: ['action:1,_id:-1', 'subjectId:1,_id:-1', 'actorId:1,_id:-1', 'eventId:1,_id:-1', 'createdAt:-1'],
  TelemetryRecord: ['!conferenceId:1,sequence:1', 'eventId:1'],
  ParticipantLog: ['!eventId:1,participantKey:1,joinedAt:1'],
  CallRecord: ['participantIds:1,startedAt:-1', 'callerId:1,startedAt:-1'],
};

let seq = 0;
const next = () => ++seq;

/** JSON form of a document, so ObjectIds and Dates compare by value. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

async function listIndexes(model: Model<any>): Promise<Map<string, boolean>> {
  const list = await model.collection.listIndexes().toArray();
  return new Map(list.map((ix) => [keyOf(ix.key), Boolean(ix.unique)]));
}

/** Declared indexes of a schema as `key -> unique`, path-level (`unique: true`) ones included. */
function declaredIndexes(model: Model<any>): [string, boolean][] {
  return model.schema.indexes().map(([key, opts]) => [keyOf(key), Boolean(opts?.unique)]);
}

async function roundTrip(model: Model<any>): Promise<void> {
  const input = sampleDoc(model.schema, next());
  const created = await model.create(input);
  const read = await model.findById(created._id).lean().exec();
  expect(plain(read)).toMatchObject(plain(input));

  const path = mutablePath(model.schema);
  if (path) {
    const changed = getPath(sampleDoc(model.schema, next()), path);
    const r = await model.updateOne({ _id: created._id }, { $set: { [path]: changed } }).exec();
    expect(r.matchedCount).toBe(1);
    const after = await model.findById(created._id).lean().exec();
    expect(plain(getPath(after as Record<string, unknown>, path))).toEqual(plain(changed));
  }

  const del = await model.deleteOne({ _id: created._id }).exec();
  expect(del.deletedCount).toBe(1);
  expect(await model.findById(created._id).lean().exec()).toBeNull();
}

async function expectUniqueEnforced(model: Model<any>): Promise<number> {
  let checked = 0;
  for (const [key, opts] of model.schema.indexes()) {
    if (!opts?.unique) continue;
    const first = sampleDoc(model.schema, next());
    const second = sampleDoc(model.schema, next());
    for (const field of Object.keys(key)) setTop(second, field, getPath(first, field));
    await model.create(first);
    const err = await model.create(second).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeDefined();
    const app = toAppError(err);
    expect(app.code).toBe('conflict');
    expect(app.status).toBe(409);
    await model.deleteMany({ _id: { $in: [first._id, second._id].filter(Boolean) } }).exec();
    checked++;
  }
  return checked;
}

function setTop(doc: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = doc;
  for (const p of parts.slice(0, -1)) cur = (cur[p] ??= {}) as Record<string, unknown>;
  cur[parts[parts.length - 1]!] = value;
}

describe('data layer: every model on the MongoDB-protocol server', () => {
  let node: TestNode;
  let db: TenantDb;

  beforeAll(async () => {
    node = await startTestNode();
    await node.services.tenants.create({ name: 'models', displayName: 'Models Clinic' });
    db = node.infra.mongo.tenantDb('models');
  });
  afterAll(async () => node.destroy());

  it('keeps the query-index table about models that exist', () => {
    const unknown = Object.keys(QUERY_INDEXES).filter((n) => !TENANT_MODEL_NAMES.includes(n as keyof TenantModels));
    expect(unknown).toEqual([]);
  });

  describe.each(TENANT_MODEL_NAMES.map((n) => [n]))('%s', (name) => {
    const model = () => db.models[name] as Model<any>;

    it('round-trips create, read, update and delete', async () => {
      await roundTrip(model());
    });

    it('has, after migration, the indexes its queries need and every declared one', async () => {
      const existing = await listIndexes(model());
      const expected: [string, boolean][] = [
        ...(QUERY_INDEXES[name] ?? []).map((k): [string, boolean] => [k.replace(/^!/, ''), k.startsWith('!')]),
        ...declaredIndexes(model()),
      ];
      for (const [key, unique] of expected) {
        expect({ key, present: existing.has(key) }).toEqual({ key, present: true });
        expect({ key, unique: existing.get(key) }).toEqual({ key, unique });
      }
    });

    it('maps a duplicate of each unique index to a conflict', async () => {
      const checked = await expectUniqueEnforced(model());
      const declared = declaredIndexes(model()).filter(([, u]) => u).length;
      expect(checked).toBe(declared);
    });
  });

  describe('catalog Tenant', () => {
    const model = () => node.infra.mongo.catalog.Tenant as Model<any>;

    it('round-trips create, read, update and delete', async () => {
      await roundTrip(model());
    });

    it('has a unique index on the tenant name once a tenant exists', async () => {
      const existing = await listIndexes(model());
      expect(existing.get('name:1')).toBe(true);
    });

    it('maps a duplicate tenant name to a conflict', async () => {
      expect(await expectUniqueEnforced(model())).toBe(1);
    });
  });
});
