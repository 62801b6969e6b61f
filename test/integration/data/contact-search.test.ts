import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Types } from 'mongoose';
import { Mongo, type TenantDb } from '../../../src/data/mongo.js';
import { migrateTenant } from '../../../src/data/migrations/migrator.js';
import { backfillNameTokens, NAME_TOKEN_BATCH, resortTitledNames } from '../../../src/data/migrations/migrations.js';
import { nameTokens, searchWords, tokensMatch } from '../../../src/data/models/name-tokens.js';
import { sortKeys } from '../../../src/data/models/user.model.js';
import {
  UserRepository,
  matchesSearch,
  searchFilter,
  type UserRecord,
} from '../../../src/data/repositories/user.repository.js';
import { CredentialRepository } from '../../../src/data/repositories/credential.repository.js';
import { seedDemoUsers } from '../../../src/data/seed/demo.seed.js';
import { uniqueId } from '../../support/env.js';

describe('contact name tokens (decision 211)', () => {
  it('folds case and accents and splits on spaces, hyphens and apostrophes', () => {
    expect(nameTokens("Dr Zoë O'Neil-Smith")).toEqual(['dr', 'neilsmith', 'oneilsmith', 'smith', 'zoe']);
    expect(nameTokens('ÅSA  Øberg-Lindqvist', 'asa.oberg')).toEqual([
      'asa',
      'asaoberg',
      'lindqvist',
      'oberg',
      'oberglindqvist',
    ]);
    expect(nameTokens('Łukasz Straße ﬁnn')).toEqual(['finn', 'lukasz', 'strasse']);
    expect(nameTokens('Ward 3 headset', 'headset-1')).toEqual(['1', '3', 'headset', 'headset1', 'ward']);
    expect(searchWords("  O'Neil  zo ZOË ")).toEqual(['oneil', 'zoe']);
    expect(searchWords("'-")).toEqual([]);
  });

  it('sorts and files a name by what follows its leading titles; the title stays searchable (decision 215)', () => {
    expect(sortKeys('Dr Alice Moreau', 'alice')).toMatchObject({
      sortName: 'alice moreau',
      initial: 'A',
      nameTokens: ['alice', 'dr', 'moreau'],
    });
    expect(sortKeys('Prof. Dr. Ümit Lee')).toMatchObject({ sortName: 'umit lee', initial: 'U' });
    expect(sortKeys('MRS  Zoë Hart')).toMatchObject({ sortName: 'zoe hart', initial: 'Z' });
    // Not titles: a name that begins with the same letters, a title alone, a title after the name.
    expect(sortKeys('Drew Barry')).toMatchObject({ sortName: 'drew barry', initial: 'D' });
    expect(sortKeys('Dr')).toMatchObject({ sortName: 'dr', initial: 'D' });
    expect(sortKeys('Ward 3 Dr Office')).toMatchObject({ sortName: 'ward 3 dr office', initial: 'W' });
  });

  it('matches a contact when every search word prefixes one of its tokens', () => {
    const t = nameTokens("Dr Zoë O'Neil-Smith", 'zoneil');
    for (const q of ['zoe', 'ZOË', "o'neil", 'oneil', 'neil', 'neil-smith', 'smith', 'dr zo', 'zon', 'o'])
      expect(tokensMatch(searchWords(q), t)).toBe(true);
    for (const q of ['oe', 'eil', 'mith', 'zoe x', 'drz']) expect(tokensMatch(searchWords(q), t)).toBe(false);
  });

  it('puts a name search into the filter only as anchored prefix regexes on the indexed nameTokens field', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.option(fc.constantFrom('A', 'Z', '#'), { nil: undefined }),
        (name, initial) => {
          const f = searchFilter({ name, initial, excludeId: new Types.ObjectId() });
          const words = searchWords(name);
          expect(Object.keys(f).sort()).toEqual(
            [
              '_id',
              'status',
              ...(initial ? ['initial'] : []),
              ...(words.length === 1 ? ['nameTokens'] : words.length > 1 ? ['$and'] : []),
            ].sort(),
          );
          const conds =
            words.length === 1
              ? [{ nameTokens: f.nameTokens }]
              : ((f.$and as Record<string, unknown>[] | undefined) ?? []);
          expect(conds).toHaveLength(words.length);
          conds.forEach((c, i) => {
            expect(Object.keys(c)).toEqual(['nameTokens']);
            const re = c.nameTokens as RegExp;
            expect(re.flags).toBe('');
            expect(re.source).toBe(`^${words[i]}`);
            expect(re.source).toMatch(/^\^[\p{L}\p{N}]+$/u);
          });
        },
      ),
    );
  });
});

/**
 * On the test server, and on a real MongoDB when TEST_REAL_MONGODB_URI names one: there explain shows
 * the search reading the `nameTokens_1` index with bounds (mongo-java-server ignores non-unique
 * secondary indexes and has no meaningful explain, so there the query shape above is the proof).
 */
const servers: [string, string][] = [
  ['test server', process.env.TEST_MONGODB_URI ?? 'mongodb://127.0.0.1:27028/'],
  ...(process.env.TEST_REAL_MONGODB_URI ? [['MongoDB', process.env.TEST_REAL_MONGODB_URI] as [string, string]] : []),
];

describe.each(servers)('contact search on %s', (name, uri) => {
  let mongo: Mongo;
  let db: TenantDb;
  const id = uniqueId();

  beforeAll(async () => {
    mongo = await Mongo.connect({ uri, catalogDb: `cc_${id}`, tenantDbPrefix: `cs_${id}_`, timeoutMs: 10_000 });
    db = mongo.tenantDb('search');
    await migrateTenant(db, { displayName: 'Search Clinic' });
  });
  afterAll(async () => {
    await mongo.dropTenantDb('search');
    await mongo.close();
  });

  const creds = () => new CredentialRepository(db);

  it('finds contacts by the prefix of any word of their name or username, case and accents ignored', async () => {
    const zoe = await creds().create({ username: 'zoneil', displayName: "Dr Zoë O'Neil-Smith", role: 'clinician' });
    await creds().create({ username: 'joe', displayName: 'Joe Bloggs', role: 'patient' });
    const repo = new UserRepository(db);
    const ids = async (q: string) => (await repo.search({ name: q, skip: 0, take: 10 })).map((u) => String(u._id));
    for (const q of ['zoe', 'ZOË', "o'neil", 'neil-smith', 'smith', 'dr zo', 'zon'])
      expect(await ids(q)).toEqual([zoe]);
    for (const q of ['oe', 'eil', 'dr joe']) expect(await ids(q)).toEqual([]);
    expect(await repo.count({ name: "o'neil" })).toBe(1);
  });

  it('keeps the tokens current when a name changes', async () => {
    const id = await creds().create({ username: 'renamed', displayName: 'Old Name', role: 'patient' });
    const repo = new UserRepository(db);
    const after = await repo.updateProfile(new Types.ObjectId(id), { displayName: 'Élodie Neuf' });
    expect(after).toMatchObject({ sortName: 'elodie neuf', initial: 'E', nameTokens: ['elodie', 'neuf', 'renamed'] });
    expect((await repo.search({ name: 'old', skip: 0, take: 5 })).map((u) => u.username)).not.toContain('renamed');
    expect((await repo.search({ name: 'elo', skip: 0, take: 5 })).map((u) => u.username)).toEqual(['renamed']);
  });

  it('seeds demo users with their tokens', async () => {
    const seeded = mongo.tenantDb(`seed${uniqueId().slice(-4)}`);
    await migrateTenant(seeded, { displayName: 'Seed' });
    await seedDemoUsers(seeded);
    const alice = await new UserRepository(seeded).findByUsername('alice');
    expect(alice?.nameTokens).toEqual(['alice', 'dr', 'moreau']);
    await seeded.conn.dropDatabase();
  });

  it('re-sorts users stored with their title as sort key (migration 7), in batches, idempotently', async () => {
    const bare = mongo.tenantDb(`rs${uniqueId().slice(-4)}`);
    await migrateTenant(bare, { displayName: 'Resort' });
    const n = NAME_TOKEN_BATCH + 3;
    // As written before titles were skipped: "Dr ..." sorted as "dr ..." and filed under D.
    const docs = Array.from({ length: n }, (_, i) => ({
      username: `d${i}`,
      idpSubject: `d${i}`,
      displayName: i % 2 ? `Dr Zed ${i}` : `Drew ${i}`,
      sortName: i % 2 ? `dr zed ${i}` : `drew ${i}`,
      initial: 'D',
      nameTokens: ['x'],
      status: 'active',
      role: 'patient',
      kind: 'person',
    }));
    await bare.models.User.collection.insertMany(docs);
    const titled = docs.filter((_, i) => i % 2).length;
    expect(await resortTitledNames(bare)).toBe(titled);
    expect(await resortTitledNames(bare)).toBe(0);
    const repo = new UserRepository(bare);
    expect(await repo.count({ initial: 'Z' })).toBe(titled);
    expect(await repo.count({ initial: 'D' })).toBe(n - titled);
    expect(await bare.models.User.collection.findOne({ username: 'd1' })).toMatchObject({
      sortName: 'zed 1',
      initial: 'Z',
      displayName: 'Dr Zed 1',
      nameTokens: ['x'],
    });
    await bare.conn.dropDatabase();
  });

  it('backfills the tokens of users stored without them, in batches, idempotently and resumably', async () => {
    const bare = mongo.tenantDb(`bf${uniqueId().slice(-4)}`);
    await migrateTenant(bare, { displayName: 'Backfill' });
    const n = NAME_TOKEN_BATCH + 37;
    const docs = Array.from({ length: n }, (_, i) => ({
      username: `u${i}`,
      idpSubject: `u${i}`,
      displayName: `Ünal ${i}-Şahin`,
      sortName: 'x',
      initial: 'X',
      status: 'active',
      role: 'patient',
      kind: 'person',
    }));
    await bare.models.User.collection.insertMany(docs);
    // A run cut short: the first user already written (as a crashed run would have left it), one
    // written by the service meanwhile with tokens of its own, which the backfill leaves alone.
    const first = await bare.models.User.collection.findOne({ username: 'u0' });
    await bare.models.User.collection.updateOne(
      { _id: first!._id },
      { $set: sortKeys(first!.displayName as string, 'u0') },
    );
    await bare.models.User.collection.updateOne({ username: 'u1' }, { $set: { nameTokens: ['kept'] } });
    expect(await backfillNameTokens(bare)).toBe(n - 2);
    expect(await backfillNameTokens(bare)).toBe(0);
    const u5 = await bare.models.User.collection.findOne({ username: 'u5' });
    expect(u5).toMatchObject({ sortName: 'unal 5-sahin', initial: 'U', nameTokens: ['5sahin', 'sahin', 'u5', 'unal'] });
    expect((await bare.models.User.collection.findOne({ username: 'u1' }))?.nameTokens).toEqual(['kept']);
    expect(await new UserRepository(bare).count({ name: 'sah' })).toBe(n - 1);
    await bare.conn.dropDatabase();
  });

  it('decides in memory exactly as the database does (matchesSearch beside searchFilter)', async () => {
    const repo = new UserRepository(db);
    const users = await db.models.User.find().lean<UserRecord[]>().exec();
    for (const q of [
      {},
      { name: 'o' },
      { name: 'ZO' },
      { name: "o'neil smi" },
      { initial: 'D' },
      { name: 'e', initial: 'E' },
      { name: 'zz' },
    ]) {
      expect(users.filter((u) => matchesSearch(q, u)).length).toBe(await repo.count(q));
    }
  });

  if (name === 'MongoDB') {
    it('reads the nameTokens index with bounds (explain)', async () => {
      const plan = await db.models.User.collection
        .find(searchFilter({ name: 'neil smi' }))
        .sort({ sortName: 1, _id: 1 })
        .limit(20)
        .explain('queryPlanner');
      const stages: Record<string, unknown>[] = [];
      const walk = (s: unknown): void => {
        if (!s || typeof s !== 'object') return;
        const st = s as Record<string, unknown>;
        if (st.stage) stages.push(st);
        for (const v of Object.values(st)) (Array.isArray(v) ? v : [v]).forEach(walk);
      };
      walk(plan.queryPlanner.winningPlan);
      expect(stages.map((s) => s.stage)).not.toContain('COLLSCAN');
      const ix = stages.find((s) => s.stage === 'IXSCAN');
      expect(ix?.indexName).toBe('nameTokens_1');
      const bounds = (ix?.indexBounds as { nameTokens: string[] }).nameTokens;
      expect(bounds[0]).toMatch(/^\["(neil|smi)", "(neim|smj)"\)$/);
    });
  }
});
