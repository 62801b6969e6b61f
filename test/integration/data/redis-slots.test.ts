import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorKeys } from '../../../src/actors/runtime/actor-keys.js';
import { ShardLeases } from '../../../src/actors/runtime/shard-leases.js';
import { SnapshotStore } from '../../../src/actors/runtime/snapshot-store.js';
import { Revocations } from '../../../src/auth/revocations.js';
import { EmbeddedRealmSessions } from '../../../src/auth/realm-sessions.js';
import { loadConfig } from '../../../src/config/config.js';
import { QUEUE_NAMES } from '../../../src/contracts/job-definitions.js';
import { PinAttemptsStore } from '../../../src/data/stores/pin-attempts.store.js';
import { DirectoryChangesStore } from '../../../src/data/stores/directory-changes.store.js';
import { CareTeamStore } from '../../../src/data/stores/care-team.store.js';
import { PresenceStore } from '../../../src/data/stores/presence.store.js';
import { createRedis, primaries, type RedisClient } from '../../../src/data/redis.js';
import { redisKeys } from '../../../src/data/redis-keys.js';
import { RealmRecordsStore } from '../../../src/data/stores/realm-records.store.js';
import { RevocationsStore } from '../../../src/data/stores/revocations.store.js';
import { testEnv, uniqueId } from '../../support/env.js';
import { keySlot, slotsOf } from '../../support/key-slot.js';

/**
 * The hash-tag design of decision 860: every key set that one script, transaction or multi-key command
 * uses lies in one cluster slot. The first part checks the key catalogue itself (on any Redis); the
 * second runs each multi-key command of the product once on TEST_REDIS_URL, which in the jest project
 * `redis-cluster` is a three-master cluster: there a key set across slots is refused with CROSSSLOT.
 */
describe('Redis keys used together share one cluster slot', () => {
  const keys = redisKeys('consult:', { cluster: true });
  const ak = actorKeys(keys.actors);

  it('actor runtime: the fenced scripts touch one slot per shard, a node inbox and reply list one per node', () => {
    for (let s = 0; s < 256; s++) {
      const used = [
        ak.lease(s),
        ak.epoch(s),
        ak.snapshot(s, 'acme/call/c1'),
        ak.timers(s),
        ak.dedupe(s, 'acme/call/c1', 'd'),
      ];
      expect(slotsOf(used)).toHaveLength(1);
    }
    expect(slotsOf([ak.inbox('node-a'), ak.replies('node-a')])).toHaveLength(1);
    // Shards spread over the slots (one hash tag for all would put every lease on one master).
    expect(new Set(Array.from({ length: 256 }, (_, s) => keySlot(ak.lease(s)))).size).toBeGreaterThan(200);
  });

  it("tenant keys: pin guard, contact directory, care-team cache, revocation markers, sessions and the realm store share the tenant's slot", () => {
    const pin = keys.pinGuard('acme', 'alice');
    const realm = keys.idpRecords('acme');
    const used = [
      pin.sources,
      pin.day,
      pin.hard,
      keys.directoryVersion('acme'),
      keys.directoryChanges('acme'),
      keys.careTeamGeneration('acme'),
      keys.careTeamWrites('acme'),
      keys.careTeam('acme', 'u1'),
      keys.revokedSession('acme', 's1'),
      keys.revokedRealmSession('acme', 'sid1'),
      keys.userNotBefore('acme', 'u1'),
      keys.session('acme', 's1'),
      keys.recording('acme', 'e1'),
      realm.record('Session', 'x'),
      realm.grant('g'),
      realm.sid('s'),
      realm.account('a'),
      realm.uid('u'),
      realm.userCode('c'),
    ];
    expect(slotsOf(used)).toHaveLength(1);
    expect(keySlot(keys.session('other', 's1'))).not.toBe(keySlot(keys.session('acme', 's1')));
  });

  it("job queues: on a cluster every queue's keys share the prefix's hash tag; on one server the prefix is unchanged", () => {
    const used = QUEUE_NAMES.flatMap((q) =>
      [
        'wait',
        'active',
        'delayed',
        'prioritized',
        'paused',
        'meta',
        'id',
        'events',
        'completed',
        'failed',
        'stalled',
        'marker',
        'job-1',
      ].map((k) => `${keys.queuePrefix}:${q}:${k}`),
    );
    expect(slotsOf(used)).toHaveLength(1);
    expect(redisKeys('consult:').queuePrefix).toBe('consult:bull');
  });

  it('refuses a REDIS_PREFIX with a brace (it would make a hash tag of the prefix) and a malformed cluster URL', () => {
    expect(() => loadConfig(testEnv({ REDIS_PREFIX: 'consult:{x}:' }))).toThrow(/REDIS_PREFIX/);
    expect(() => loadConfig(testEnv({ REDIS_URL: 'redis+cluster://u:p@host-without-port' }))).toThrow(/REDIS_URL/);
    expect(loadConfig(testEnv({ REDIS_URL: 'redis+cluster://u:p@10.0.0.1:7000,10.0.0.2:7000' })).redis.cluster).toBe(
      true,
    );
  });
});

describe('every multi-key command of the product on TEST_REDIS_URL', () => {
  const url = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6390';
  const prefix = `test:${uniqueId()}:`;
  const cluster = url.includes('+cluster://');
  const keys = redisKeys(prefix, { cluster });
  let redis: RedisClient;

  beforeAll(() => {
    redis = createRedis(url, 'slots-test');
  });
  afterAll(async () => {
    for (const node of primaries(redis)) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
        await Promise.all(found.map((k) => node.del(k)));
        cursor = next;
      } while (cursor !== '0');
    }
    await redis.quit();
  });

  it('computes slots as this Redis does (cluster only: CLUSTER KEYSLOT)', async () => {
    if (!cluster) return expect(await redis.ping()).toBe('PONG');
    for (const key of [keys.session('acme', 's1'), `${keys.queuePrefix}:media:wait`, actorKeys(keys.actors).lease(7)])
      expect(await redis.call('CLUSTER', 'KEYSLOT', key)).toBe(keySlot(key));
  });

  it('actor leases: acquire, fenced turn write (five keys) and fence check', async () => {
    const ak = actorKeys(keys.actors);
    const leases = new ShardLeases({ redis, keys: ak, nodeId: 'slots-node', leaseMs: 5000 });
    const store = new SnapshotStore({ redis, keys: ak, dedupeTtlMs: 5000 });
    const lease = (await leases.acquire(3))!;
    expect(lease.epoch).toBeGreaterThan(0);
    const snapshot = {
      state: { n: 1 },
      timers: [{ name: 't', due: Date.now() + 60_000, msg: {} }],
      epoch: lease.epoch,
    };
    const reply = { ok: true, value: 1 };
    expect(await store.saveTurn(lease, 'acme/call/c1', { mode: 'set', snapshot, dedupeId: 'd1', reply })).toBe(true);
    expect(await store.lookupReply(3, 'acme/call/c1', 'd1')).toEqual(reply);
    expect(await store.checkFence(lease)).toBe(true);
    await leases.release(lease);
    expect(await store.checkFence(lease)).toBe(false);
  });

  it("pin attempts: reserve, fail, succeed and clear run on the account's three keys", async () => {
    const attempts = new PinAttemptsStore({ redis, keys });
    const k = keys.pinGuard('acme', 'alice');
    const lockout = { maxAttempts: 2, lockoutSeconds: 60, maxLockoutSeconds: 600, maxFailuresPerDay: 20 };
    const r = await attempts.reserve('acme', 'alice', 'ip1', lockout);
    expect(r.kind).toBe('ok');
    if (r.kind !== 'ok') return;
    expect((await attempts.fail('acme', 'alice', 'ip1', r, lockout)).kind).toBe('failed');
    await attempts.succeed('acme', 'alice', 'ip1');
    await attempts.clear('acme', 'alice');
    expect(await redis.exists(k.sources, k.day, k.hard)).toBe(0);
  });

  it('revocation check: one MGET of the session, realm-session and not-before markers', async () => {
    const revocations = new Revocations({
      store: new RevocationsStore({ redis, keys }),
      markerTtlSeconds: 60,
      idpMarkerTtlSeconds: 60,
    });
    const subject = { tenant: 'acme', sessionId: 's1', idpSid: 'sid1', userId: 'u1', issuedAt: 1 };
    await expect(revocations.check(subject)).resolves.toBeUndefined();
    await revocations.revokeRealmSession('acme', 'u1', 'sid1');
    await expect(revocations.check(subject)).rejects.toMatchObject({ code: 'session_revoked' });
  });

  it('contact directory change note: one script on the version and the change log', async () => {
    // The store's script itself (the directory logs and swallows a failure; the store surfaces it).
    const changes = new DirectoryChangesStore({ redis, keys });
    expect(await changes.record('acme', ['u1', 'u2'], 1000)).toBe(1);
    expect(await changes.notes('acme', 0, 1)).toEqual([{ seq: 1, ids: ['u1', 'u2'] }]);
  });

  it("presence of a page of contacts: one script over the users' presence sets", async () => {
    const presence = new PresenceStore({ redis, keys });
    await presence.addConnection({ tenant: 'acme', userId: 'u2', socketId: 's1' }, 'slots-node', 60_000);
    expect([...(await presence.onlineMany('acme', ['u1', 'u2', 'u3']))]).toEqual(['u2']);
    expect(await presence.removeConnection({ tenant: 'acme', userId: 'u2', socketId: 's1' }, 'slots-node')).toBe(true);
    expect(await presence.onlineMany('acme', ['u1', 'u2', 'u3'])).toEqual(new Set());
  });

  it("care-team cache: a write's marks, a recall and a kept answer run on the tenant's generation, writes and entry", async () => {
    const careTeams = new CareTeamStore({ redis, keys, ttlSeconds: 60 });
    await careTeams.end('acme', await careTeams.begin('acme'));
    const { ticket } = await careTeams.recall('acme', 'u1');
    expect(await careTeams.remember(ticket!, ['0123456789abcdef01234567'])).toBe(true);
    expect(await careTeams.recall('acme', 'u1')).toEqual({ ids: ['0123456789abcdef01234567'] });
  });

  it('embedded realm store: upsert (a transaction over the record and its indexes), end the session, revoke a grant', async () => {
    const records = new RealmRecordsStore({ redis, keys });
    const adapter = records.adapterFactory('acme');
    await adapter('Session').upsert(
      'sess1',
      { uid: 'uid1', accountId: 'acct1', authorizations: { web: { sid: 'sid9', grantId: 'g1' } } },
      60,
    );
    await adapter('Grant').upsert('g1', { accountId: 'acct1' }, 60);
    await adapter('AccessToken').upsert('at1', { grantId: 'g1', accountId: 'acct1' }, 60);
    await adapter('AccessToken').upsert('at2', { grantId: 'g2', accountId: 'acct1' }, 60);
    const sessions = new EmbeddedRealmSessions({ records });
    expect((await sessions.endAccount('acme', 'acct1')).sort()).toEqual(['sid9', 'uid1']);
    expect(await adapter('AccessToken').find('at1')).toBeUndefined();
    await adapter('AccessToken').revokeByGrantId('g2');
    expect(await adapter('AccessToken').find('at2')).toBeUndefined();
  });
});
