import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { Types } from 'mongoose';
import { Mongo, type TenantDb } from '../../../src/data/mongo.js';
import { migrateTenant } from '../../../src/data/migrations/migrator.js';
import { redisKeys } from '../../../src/data/redis-keys.js';
import { UserRepository, type UserSearch } from '../../../src/data/repositories/user.repository.js';
import { CredentialRepository } from '../../../src/data/repositories/credential.repository.js';
import { ContactDirectory } from '../../../src/data/search/contact-directory.js';
import { DirectoryIndex } from '../../../src/data/search/directory-index.js';
import { DirectoryChangesStore } from '../../../src/data/stores/directory-changes.store.js';
import { createLogger } from '../../../src/observability/logger.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { uniqueId } from '../../support/env.js';

/** Name pieces: accents, duplicates after folding, hyphens, apostrophes, letters without decomposition, non-Latin, astral. */
const PIECES = [
  'Zoë',
  'Zoe',
  'ZOÉ',
  "O'Neil",
  'Neil',
  'Smith',
  'Anne-Marie',
  'Øberg',
  'oberg',
  'Łukasz',
  'ﬁnn',
  'Straße',
  'Dr',
  'Élodie',
  '李',
  '😀x',
  '\uE000y',
  '#1',
  '2',
  'al',
  'Al-',
  "'",
  '-',
];
/** Names starting with an astral character or one from U+E000 sort differently by code unit and by code point: drawn often. */
const name = fc
  .array(fc.oneof(fc.constantFrom(...PIECES), fc.constantFrom('😀x', '\uE000y', '\uFB01z')), {
    minLength: 1,
    maxLength: 3,
  })
  .map((p) => p.join(' ').trim() || 'X');
const userArb = fc.record({
  displayName: name,
  status: fc.constantFrom('active', 'active', 'active', 'pending', 'disabled'),
  role: fc.constantFrom('clinician', 'patient', 'support'),
});
const queryArb = (n: number) =>
  fc.record({
    name: fc.option(
      fc.oneof(
        fc.constantFrom(...PIECES, 'zo', 'o', 'ne', 'al', 'oneil', 'neil-sm', 'anne m', 'dr z', 'stras', ''),
        fc.string({ maxLength: 4 }),
      ),
      { nil: undefined },
    ),
    initial: fc.option(fc.constantFrom('Z', 'O', 'A', 'D', 'E', 'L', 'F', 'S', '#'), { nil: undefined }),
    ids: fc.option(fc.subarray([...Array(n).keys()]), { nil: undefined }),
    notIds: fc.option(fc.subarray([...Array(n).keys()], { maxLength: Math.min(3, n) }), { nil: undefined }),
    exclude: fc.option(fc.nat(Math.max(0, n - 1)), { nil: undefined }),
    skip: fc.nat(n + 1),
    take: fc.integer({ min: 1, max: 8 }),
    cap: fc.option(fc.integer({ min: 1, max: n + 2 }), { nil: undefined }),
  });
/** Writes after the load, through the product's write paths (which note the change for the directory). */
const writeArb = (n: number) =>
  fc.oneof(
    fc.record({ kind: fc.constant('rename' as const), at: fc.nat(Math.max(0, n - 1)), displayName: name }),
    fc.record({ kind: fc.constant('create' as const), displayName: name }),
    fc.record({
      kind: fc.constant('role' as const),
      at: fc.nat(Math.max(0, n - 1)),
      role: fc.constantFrom('clinician', 'patient'),
    }),
  );

describe('in-memory contact directory (decision 212)', () => {
  const id = uniqueId();
  const prefix = `test:${id}:`;
  let mongo: Mongo;
  let redis: Redis;
  let runs = 0;

  beforeAll(async () => {
    mongo = await Mongo.connect({
      uri: process.env.TEST_MONGODB_URI ?? 'mongodb://127.0.0.1:27028/',
      catalogDb: `dc_${id}`,
      tenantDbPrefix: `dt_${id}_`,
      timeoutMs: 10_000,
    });
    redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390');
  });
  /** A node's directory over the test databases (notes under this run's Redis prefix). */
  const directoryOf = (nodeId: string, limits = { maxTenants: 5, maxEntries: 1000 }) =>
    new ContactDirectory({
      changes: new DirectoryChangesStore({ redis, keys: redisKeys(prefix) }),
      users: (t) => new UserRepository(mongo.tenantDb(t)),
      order: mongo.server.stringOrder,
      ...limits,
      rebuildMs: 600_000,
      logger: createLogger({ level: 'silent', nodeId }),
    });
  afterAll(async () => {
    for (let i = 0; i < runs; i++) await mongo.dropTenantDb(`p${i}`).catch(() => undefined);
    await mongo.close();
    await redis.quit();
  });

  it('answers every query exactly as the database does, before and after writes on the product paths', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .array(userArb, { minLength: 1, maxLength: 24 })
          .chain((users) =>
            fc.tuple(
              fc.constant(users),
              fc.array(queryArb(users.length), { minLength: 4, maxLength: 8 }),
              fc.array(writeArb(users.length), { maxLength: 4 }),
            ),
          ),
        async ([users, queries, writes]) => {
          const tenant = `p${runs++}`;
          const db: TenantDb = mongo.tenantDb(tenant);
          await db.models.User.createIndexes();
          const directory = directoryOf('prop');
          mongo.onUsersChanged((t, ids) => directory.recordChange(t, ids));
          const creds = new CredentialRepository(db);
          const ids: Types.ObjectId[] = [];
          for (const [i, u] of users.entries()) {
            const uid = await creds.create({ username: `u${i}`, displayName: u.displayName, role: u.role });
            if (u.status !== 'active')
              await db.models.User.updateOne({ _id: uid }, { $set: { status: u.status } }).exec();
            ids.push(new Types.ObjectId(uid));
          }
          const repo = new UserRepository(db);
          expect(await directory.ready(tenant)).toBe(true);
          const compare = async () => {
            for (const q of queries) {
              const s: UserSearch = {
                name: q.name,
                initial: q.initial,
                skip: q.skip,
                take: q.take,
                ...(q.ids ? { ids: q.ids.map((i) => ids[i]!) } : {}),
                ...(q.notIds ? { notIds: q.notIds.map((i) => ids[i]!) } : {}),
                ...(q.exclude !== undefined ? { excludeId: ids[q.exclude] } : {}),
              };
              expect((await directory.search(tenant, s))?.map(String)).toEqual(
                (await repo.search(s)).map((u) => String(u._id)),
              );
              expect(await directory.count(tenant, s, q.cap)).toBe(await repo.count(s, q.cap));
            }
            const me = ids[0];
            expect(await directory.initials(tenant, me)).toEqual(await repo.initials(me));
          };
          await compare();
          for (const w of writes) {
            if (w.kind === 'rename') await repo.updateProfile(ids[w.at]!, { displayName: w.displayName });
            else if (w.kind === 'role') await creds.setRole(String(ids[w.at]!), w.role);
            else
              ids.push(
                new Types.ObjectId(
                  await creds.create({ username: `n${ids.length}`, displayName: w.displayName, role: 'patient' }),
                ),
              );
          }
          await compare();
          mongo.onUsersChanged(undefined);
        },
      ),
      // Shrinking re-runs the database side: bounded in time, it then reports the smallest failure found so far.
      { numRuns: Number(process.env.DIRECTORY_PROPERTY_RUNS ?? 25), interruptAfterTimeLimit: 150_000 },
    );
  }, 240_000);

  it('orders names as the server does, astral characters and those from U+E000 included', async () => {
    const tenant = `p${runs++}`;
    const db = mongo.tenantDb(tenant);
    await db.models.User.createIndexes();
    const creds = new CredentialRepository(db);
    for (const [i, n] of ['😀 a', '\uE000 b', '\uFFFD c', 'z', '😁', '\uD7FF'].entries())
      await creds.create({ username: `o${i}`, displayName: n, role: 'patient' });
    const directory = directoryOf('order');
    expect(await directory.ready(tenant)).toBe(true);
    const all = { skip: 0, take: 10 };
    expect((await directory.search(tenant, all))?.map(String)).toEqual(
      (await new UserRepository(db).search(all)).map((u) => String(u._id)),
    );
  });

  it('lists and counts once a user with two tokens in the searched prefix range, in the database order', async () => {
    const tenant = `p${runs++}`;
    const db = mongo.tenantDb(tenant);
    await db.models.User.createIndexes();
    const creds = new CredentialRepository(db);
    // Two of them have two tokens starting with "ann" (the range holds 5 rows for 3 users; in token
    // order Bea comes last, in name order second), among enough others that the directory selects from
    // the range rather than from the whole list.
    const names = ['Anna Annabel', 'Bea Annz', 'Jo-Anne Annex', ...Array.from({ length: 12 }, (_, i) => `Bo ${i}`)];
    for (const [i, n] of names.entries()) await creds.create({ username: `t${i}`, displayName: n, role: 'patient' });
    const directory = directoryOf('twice');
    expect(await directory.ready(tenant)).toBe(true);
    const repo = new UserRepository(db);
    for (const q of [
      { name: 'ann', skip: 0, take: 10 },
      { name: 'ann', skip: 1, take: 1 },
      { name: 'anne', skip: 0, take: 10 },
    ]) {
      const fromDb = (await repo.search(q)).map((u) => String(u._id));
      expect((await directory.search(tenant, q))?.map(String)).toEqual(fromDb);
      expect(await directory.count(tenant, q)).toBe(await repo.count(q));
    }
    expect(await directory.count(tenant, { name: 'ann' })).toBe(3);
    // A rename that moves a user before Bea in name order and leaves the "ann" token rows where they
    // were: the range's order kept from the searches above must not answer any more.
    mongo.onUsersChanged((t, ids) => directory.recordChange(t, ids));
    try {
      const [bo] = await repo.search({ name: 'bo 11', skip: 0, take: 1 });
      await repo.updateProfile(bo!._id, { displayName: 'Bb 11' });
      for (const q of [
        { name: 'ann', skip: 0, take: 10 },
        { name: 'ann', skip: 1, take: 1 },
      ])
        expect((await directory.search(tenant, q))?.map(String)).toEqual(
          (await repo.search(q)).map((u) => String(u._id)),
        );
    } finally {
      mongo.onUsersChanged(undefined);
    }
  });

  it('reloads a tenant when change notes are missing (a gap), and answers from the database meanwhile', async () => {
    const tenant = `p${runs++}`;
    const db = mongo.tenantDb(tenant);
    await migrateTenant(db, { displayName: tenant });
    const keys = redisKeys(prefix);
    const directory = directoryOf('gap');
    const creds = new CredentialRepository(db);
    await creds.create({ username: 'first', displayName: 'First Person', role: 'patient' });
    expect(await directory.ready(tenant)).toBe(true);
    // A write whose note is lost: the user is in the database, the number moves on without its note.
    await creds.create({ username: 'lost', displayName: 'Lost Note', role: 'patient' });
    await redis.incr(keys.directoryVersion(tenant));
    expect(await directory.search(tenant, { name: 'lost', skip: 0, take: 5 })).toBeUndefined();
    expect(await directory.ready(tenant)).toBe(true);
    expect((await directory.search(tenant, { name: 'lost', skip: 0, take: 5 }))?.length).toBe(1);
  });

  it('applies many change notes in slices of the event loop, and every one of them', async () => {
    const tenant = `p${runs++}`;
    const db = mongo.tenantDb(tenant);
    await migrateTenant(db, { displayName: tenant });
    const directory = directoryOf('slices', { maxTenants: 5, maxEntries: 10_000 });
    const creds = new CredentialRepository(db);
    await creds.create({ username: 'first', displayName: 'First Person', role: 'patient' });
    expect(await directory.ready(tenant)).toBe(true);
    // 300 users written after the load, each with its own change note, applied by the next search.
    mongo.onUsersChanged((t, ids) => directory.recordChange(t, ids));
    try {
      for (let i = 0; i < 300; i++)
        await creds.create({ username: `slice${i}`, displayName: `Slice Person${i}`, role: 'patient' });
    } finally {
      mongo.onUsersChanged(undefined);
    }
    // Which turn of the event loop each write to the index ran in.
    let turn = 0;
    let counting = true;
    const tick = () => {
      turn++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const turns: number[] = [];
    const original = DirectoryIndex.prototype.upsert;
    const spy = jest.spyOn(DirectoryIndex.prototype, 'upsert').mockImplementation(function (this: DirectoryIndex, e) {
      turns.push(turn);
      original.call(this, e);
    });
    // The slices end by the clock (8 ms each): a clock that moves 1 ms at every look ends them after the
    // same work on any machine.
    let clock = 0;
    const now = jest.spyOn(performance, 'now').mockImplementation(() => (clock += 1));
    try {
      expect(await directory.count(tenant, { name: 'slice' })).toBe(300);
    } finally {
      now.mockRestore();
      spy.mockRestore();
      counting = false;
    }
    expect(turns).toHaveLength(300);
    expect(new Set(turns).size).toBeGreaterThan(1);
    expect((await directory.search(tenant, { name: 'slice person299', skip: 0, take: 5 }))?.length).toBe(1);
  });

  it('holds at most the configured number of tenants and leaves a tenant above the entry cap to the database', async () => {
    const directory = directoryOf('cap', { maxTenants: 2, maxEntries: 2 });
    const tenants = [`p${runs++}`, `p${runs++}`, `p${runs++}`];
    for (const t of tenants) {
      await migrateTenant(mongo.tenantDb(t), { displayName: t });
      await new CredentialRepository(mongo.tenantDb(t)).create({
        username: 'one',
        displayName: 'One',
        role: 'patient',
      });
      expect(await directory.ready(t)).toBe(true);
    }
    expect(directory.heldTenants()).toEqual(tenants.slice(1));
    const big = tenants[0]!;
    for (const u of ['two', 'three'])
      await new CredentialRepository(mongo.tenantDb(big)).create({ username: u, displayName: u, role: 'patient' });
    expect(await directory.ready(big)).toBe(false);
    expect(await directory.search(big, { skip: 0, take: 5 })).toBeUndefined();
  });
  it('loads the tenants given at start one after another, saying how far it is until done (decision 1139)', async () => {
    const tenants = [`p${runs++}`, `p${runs++}`];
    for (const t of tenants) {
      await migrateTenant(mongo.tenantDb(t), { displayName: t });
      await new CredentialRepository(mongo.tenantDb(t)).create({
        username: 'w',
        displayName: 'Warm One',
        role: 'patient',
      });
    }
    // The second tenant's read waits until the test lets it go: the warm-up is seen half done.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const waiting = new Promise<void>((r) => (reached = r));
    const directory = new ContactDirectory({
      changes: new DirectoryChangesStore({ redis, keys: redisKeys(prefix) }),
      users: (t) => {
        const repo = new UserRepository(mongo.tenantDb(t));
        if (t !== tenants[1]) return repo;
        return {
          directoryFields: (ids) => repo.directoryFields(ids),
          async *directoryCursor() {
            reached();
            await gate;
            yield* repo.directoryCursor();
          },
        };
      },
      order: mongo.server.stringOrder,
      maxTenants: 5,
      maxEntries: 1000,
      rebuildMs: 600_000,
      logger: createLogger({ level: 'silent', nodeId: 'warm' }),
    });
    expect(directory.warmth()).toBeUndefined();
    const warming = directory.warm(tenants);
    await waiting;
    expect(directory.warmth()).toMatchObject({ loaded: 1, total: 2, done: false });
    expect(directory.heldTenants()).toEqual([tenants[0]]);
    release();
    await warming;
    expect(directory.warmth()).toMatchObject({ loaded: 2, total: 2, done: true });
    expect(directory.heldTenants()).toEqual(tenants);
    expect((await directory.search(tenants[1]!, { name: 'warm', skip: 0, take: 5 }))?.length).toBe(1);
  });
});

describe('a node started on existing tenants (decision 1139)', () => {
  let a: TestNode;
  let b: TestNode | undefined;
  const tenant = 'warmstart';

  beforeAll(async () => {
    a = await startTestNode({ CONTACT_DIRECTORY_MEMORY: 'on' });
  });
  afterAll(async () => {
    await b?.stop();
    await a.destroy();
  });

  it('is ready once it holds their directories, before any search, and then answers from memory', async () => {
    await createUser(a, tenant, { username: 'alice', role: 'clinician', displayName: 'Alice Moreau' });
    const bob = await createUser(a, tenant, { username: 'bob', role: 'clinician', displayName: 'Bob Okafor' });
    b = await startTestNode({
      CONTACT_DIRECTORY_MEMORY: 'on',
      MONGODB_CATALOG_DB: a.config.mongo.catalogDb,
      MONGODB_TENANT_DB_PREFIX: a.config.mongo.tenantDbPrefix,
      REDIS_PREFIX: a.config.redis.prefix,
    });
    let ready = await b.http.get('/readyz');
    while (ready.status !== 200) {
      expect(ready.status).toBe(503);
      expect(ready.body.checks.directory).toMatchObject({ status: 'down', tenants: 1 });
      await new Promise<void>((r) => setImmediate(r));
      ready = await b.http.get('/readyz');
    }
    expect(ready.body.checks.directory).toMatchObject({ status: 'up', tenants: 1, tenantsLoaded: 1 });
    expect(b.services.contactDirectory!.heldTenants()).toEqual([tenant]);
    // A search by a clinician over REST, answered by B.
    const r = await b.http.get('/api/contacts/get?name=bob&skip=0&take=5', {
      tenant,
      token: await tokenFor(b, tenant, 'alice'),
    });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body)).toContain(bob);
  });
});

describe('in-memory contact directory across two nodes', () => {
  let a: TestNode;
  let b: TestNode;
  const tenant = 'twonodes';

  beforeAll(async () => {
    a = await startTestNode({ CONTACT_DIRECTORY_MEMORY: 'on' });
    b = await startTestNode({
      CONTACT_DIRECTORY_MEMORY: 'on',
      MONGODB_CATALOG_DB: a.config.mongo.catalogDb,
      MONGODB_TENANT_DB_PREFIX: a.config.mongo.tenantDbPrefix,
      REDIS_PREFIX: a.config.redis.prefix,
    });
  });
  afterAll(async () => {
    await b.stop();
    await a.destroy();
  });

  it("shows a write made on node A in node B's next search, answered from B's memory", async () => {
    const alice = await createUser(a, tenant, { username: 'alice', role: 'clinician', displayName: 'Alice Moreau' });
    const bob = await createUser(a, tenant, { username: 'bob', role: 'clinician', displayName: 'Bob Okafor' });
    const dirB = b.services.contactDirectory!;
    expect(await dirB.ready(tenant)).toBe(true);
    expect(await a.services.contactDirectory!.ready(tenant)).toBe(true);
    expect((await dirB.search(tenant, { name: 'zoe', skip: 0, take: 5 }))?.map(String)).toEqual([]);
    // Renamed on A (the contact update path), then searched on B at once: no wait, no sleep.
    await a.services.contacts.update({ tenant, userId: bob } as never, { displayName: 'Zoë Okafor' });
    expect((await dirB.search(tenant, { name: 'zoe', skip: 0, take: 5 }))?.map(String)).toEqual([bob]);
    const carol = await createUser(a, tenant, { username: 'carol', role: 'patient', displayName: 'Carol Zorn' });
    expect((await dirB.search(tenant, { name: 'zo', skip: 0, take: 5 }))?.map(String)).toEqual([carol, bob]);
    expect(await dirB.count(tenant, { name: 'zo', excludeId: new Types.ObjectId(alice) })).toBe(2);
    // And the node that wrote sees it in its own next read.
    expect(
      (await a.services.contactDirectory!.search(tenant, { name: 'zorn', skip: 0, take: 5 }))?.map(String),
    ).toEqual([carol]);
  });
});
