import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorKeys } from '../../../src/actors/runtime/actor-keys.js';
import { addressKey, shardOf } from '../../../src/actors/runtime/index.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { uniqueId } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { dropPrefix } from '../../support/actor-kit.js';
import { connect } from '../../support/hub-client.js';
import { ChaosContext, Session, TRANSIENT, callLive, loop, pause, take } from './chaos-agents.js';
import { ChaosCluster, LeaseSampler } from './chaos-cluster.js';
import { recordResult, trace } from './results.js';

const SOAK = process.env.SOAK === '1';
/** Bounded in `npm test` (CI budget); `npm run test:soak` runs ten minutes. */
const RUN_MS = SOAK ? 600_000 : 60_000;
const FAULT_EVERY_MS = SOAK ? 8_000 : 3_000;
const SHARDS = 16;
const MEETINGS = 3;

interface Acked { seq: number; action: string }

describe('faults: chaos run over three hub nodes', () => {
  const id = uniqueId();
  const shared = {
    ROLES: 'http,hub,actors', MONGODB_CATALOG_DB: `tc_${id}`, MONGODB_TENANT_DB_PREFIX: `tt_${id}_`, REDIS_PREFIX: `test:${id}:`,
    ACTOR_SHARDS: String(SHARDS), ACTOR_LEASE_MS: '1500', ACCESS_TOKEN_TTL_SECONDS: '3600',
  };
  const cluster = new ChaosCluster(shared);
  const ctx = new ChaosContext(() => cluster.liveUrls());
  const users: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const events: { id: string; code: string }[] = [];
  let anchor: TestNode;

  beforeAll(async () => {
    // The anchor only provisions users and tokens and reads Redis; it hosts no hub and no actors.
    anchor = await startTestNode({ ...shared, ROLES: 'http' });
    const people = [['alice', 'clinician'], ['bob', 'clinician'], ['carol', 'patient'], ['dave', 'patient'], ['hs', 'device']] as const;
    for (const [u, role] of people) {
      users[u] = await createUser(anchor, 'acme', { username: u, role, kind: role === 'device' ? 'device' : 'person' });
      tokens[u] = await tokenFor(anchor, 'acme', u);
    }
    const host = await anchor.services.auth.verifyAccessToken('acme', tokens.alice!);
    for (let i = 0; i < MEETINGS; i++) {
      const now = Date.now();
      const e = await anchor.services.events.create(host, { name: `Chaos ${i}`, startAt: new Date(now).toISOString(), endAt: new Date(now + 7_200_000).toISOString(), participants: [{ userId: users.bob!, role: 'participant' }], attachments: [] });
      events.push({ id: String(e._id), code: String(e.meetingCode) });
    }
    await cluster.start();
    trace('chaos: cluster up');
  }, 180_000);

  afterAll(async () => {
    trace('chaos: cleanup');
    ctx.stopped = true;
    await cluster.destroy();
    await dropPrefix(anchor, shared.REDIS_PREFIX).catch(() => undefined);
    await anchor.destroy();
  }, 120_000);

  const acked: Acked[][] = Array.from({ length: MEETINGS }, () => []);
  const lastAcked = (m: number) => acked[m]!.at(-1)?.seq ?? 0;
  const counts = { notify: 0, details: 0, callsEnded: 0, heartbeats: 0 };

  /** The host notifies in a loop; every acknowledged seq is remembered. */
  function hostAgent(m: number) {
    const eventId = events[m]!.id;
    const s = new Session(ctx, tokens.alice!, (c) => callLive(c, 'initEvent', { eventId }));
    let k = 0;
    return loop(ctx, 100, async () => {
      const c = await s.ready();
      const d = c && take(ctx, await callLive(c, 'notify', `m${m}-${k++}`, { eventId }));
      if (!d) return false;
      acked[m]!.push({ seq: d.seq, action: `m${m}-${k - 1}` });
      counts.notify++;
      return true;
    }).finally(() => s.close());
  }

  /** A participant reads the meeting: it must never see less than what was acknowledged before it asked. */
  function participantAgent(m: number) {
    const eventId = events[m]!.id;
    const s = new Session(ctx, tokens.bob!, (c) => callLive(c, 'joinEvent', { eventId }));
    return loop(ctx, 250, async () => {
      const c = await s.ready();
      const floor = lastAcked(m);
      const d = c && take(ctx, await callLive(c, 'getMeetingDetails', { eventId }));
      if (!d) return false;
      if (d.seq < floor) ctx.violations.push(`meeting ${m}: read seq ${d.seq} after seq ${floor} was acknowledged`);
      counts.details++;
      return true;
    }).finally(() => s.close());
  }

  /** Calls carol -> dave: init, accept, end; an acknowledged end must stay ended. */
  function callAgent() {
    const none = async () => ({ ok: true as const, data: undefined });
    const [caller, callee] = [new Session(ctx, tokens.carol!, none), new Session(ctx, tokens.dave!, none)];
    return loop(ctx, 200, async () => {
      const [c, d] = [await caller.ready(), await callee.ready()];
      const call = c && d && take(ctx, await callLive(c, 'initCall', { calleeIds: [users.dave], callType: 'audio' }));
      if (!call) return false;
      const callId = call.callId;
      if (!take(ctx, await callLive(d!, 'acceptCall', { callId })) || !take(ctx, await callLive(c!, 'endCall', { callId }))) return false;
      counts.callsEnded++;
      const again = await callLive(d!, 'acceptCall', { callId });
      if (again.ok) ctx.violations.push(`call ${callId}: accepted again after its end was acknowledged`);
      return true;
    }).finally(() => [caller, callee].forEach((s) => s.close()));
  }

  /** A headset in meeting 0 heartbeats. */
  function headsetAgent() {
    const { id: eventId, code } = events[0]!;
    const s = new Session(ctx, tokens.hs!, (c) => callLive(c, 'initRapidConnect', 'HS-CHAOS-1', code));
    let battery = 100;
    return loop(ctx, 300, async () => {
      const c = await s.ready();
      const d = c && take(ctx, await callLive(c, 'deviceStatus', eventId, { deviceId: 'HS-CHAOS-1', batteryLevel: (battery = battery > 1 ? battery - 1 : 100) }));
      if (!d) return false;
      counts.heartbeats++;
      return true;
    }).finally(() => s.close());
  }

  /** After the run: retries a method through the transient errors a settling cluster may still give. */
  async function settled<T = any>(method: 'getMeetingDetails' | 'notify', ...args: unknown[]): Promise<T> {
    for (let attempt = 0; attempt < 60; attempt++) {
      const c = await connect(ctx.pickUrl(), 'acme', { token: tokens.alice }).catch(() => undefined);
      const r = c ? await callLive<T>(c, 'initEvent', args.at(-1)).then((j) => (j.ok ? callLive<T>(c, method, ...args) : j)) : undefined;
      c?.close();
      if (r?.ok) return r.data;
      if (r && !TRANSIENT.has(r.error.code)) throw new Error(`${method}: ${r.error.code} ${r.error.message}`);
      await pause(500);
    }
    throw new Error(`${method} did not settle`);
  }

  it('loses no acknowledged state, never has two owners of an epoch, and converges', async () => {
    const sampler = new LeaseSampler(anchor.infra.redis, shared.REDIS_PREFIX, Array.from({ length: SHARDS }, (_, i) => i));
    sampler.start();
    // Meetings start before anyone joins: a participant's "not started" later would be lost state.
    for (const e of events) await settled('getMeetingDetails', { eventId: e.id });
    const agents = [...events.flatMap((_, m) => [hostAgent(m), participantAgent(m)]), callAgent(), headsetAgent()];
    trace('chaos: agents running');
    await cluster.chaos(Date.now() + RUN_MS, FAULT_EVERY_MS);
    ctx.stopped = true;
    trace(`chaos: faults over ${JSON.stringify(cluster.kills)}, counts ${JSON.stringify(counts)}, failures ${JSON.stringify(Object.fromEntries(ctx.failures))} ${JSON.stringify(ctx.details)}`);
    await Promise.all(agents);
    sampler.stop();
    trace('chaos: agents stopped');

    const keys = actorKeys(`${shared.REDIS_PREFIX}actors:`);
    for (let m = 0; m < MEETINGS; m++) {
      const eventId = events[m]!.id;
      const seqs = acked[m]!.map((a) => a.seq);
      expect(seqs.length).toBeGreaterThan(0);
      seqs.forEach((seq, i) => i > 0 && expect(seq).toBeGreaterThan(seqs[i - 1]!));
      const final = await settled('getMeetingDetails', { eventId });
      trace(`chaos: meeting ${m} settled at seq ${final.seq}, last acked ${lastAcked(m)}`);
      expect(final.seq).toBeGreaterThanOrEqual(lastAcked(m));
      expect(final.members.map((x: { userId: string }) => x.userId).sort()).toEqual([users.alice, users.bob].sort());
      const after = await settled('notify', 'after-chaos', { eventId });
      expect(after.seq).toBeGreaterThan(final.seq);
      const address = { tenant: 'acme', kind: 'meeting' as const, id: eventId };
      const shard = shardOf(address, SHARDS);
      const [lease, snap] = await anchor.infra.redis.mget(keys.lease(shard), keys.snapshot(shard, addressKey(address)));
      expect(cluster.liveIds()).toContain(lease!.slice(0, lease!.lastIndexOf('|')));
      expect(JSON.parse(snap!).epoch).toBe(Number(lease!.slice(lease!.lastIndexOf('|') + 1)));
    }
    const fencedWrites = await cluster.counterSum('actor_fenced_writes_total');
    const result = {
      runMs: RUN_MS, faults: cluster.kills, acked: counts, failures: Object.fromEntries(ctx.failures),
      leaseSamples: sampler.samples, epochsSeen: sampler.epochsSeen(), fencedWritesOnSurvivors: fencedWrites,
      violations: ctx.violations.length, sharedEpochs: sampler.sharedEpochs().length,
    };
    recordResult('chaos', result);
    expect(ctx.violations).toEqual([]);
    expect(sampler.sharedEpochs()).toEqual([]);
    expect(sampler.regressions).toEqual([]);
    expect(ctx.unexpected()).toEqual({});
    expect(cluster.kills.sigkill + cluster.kills.sigterm).toBeGreaterThanOrEqual(SOAK ? 30 : 5);
    expect(counts.callsEnded + counts.heartbeats).toBeGreaterThan(0);
  }, RUN_MS + 360_000);
});
