import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorKeys } from '../../../src/actors/runtime/actor-keys.js';
import { addressKey, shardOf } from '../../../src/actors/runtime/index.js';
import { parseAddressKey } from '../../../src/actors/runtime/placement.js';
import { probeClock } from '../../../src/actors/runtime/turn-probe.js';
import { createUser, registerHardware, tokenFor } from '../../support/auth.js';
import { uniqueId } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { dropPrefix } from '../../support/actor-kit.js';
import { connect } from '../../support/hub-client.js';
import { ChaosContext, Session, TRANSIENT, callLive, loop, pause, take, within } from './chaos-agents.js';
import { ChaosCluster, LeaseSampler, START_TIMEOUT_MS } from './chaos-cluster.js';
import { checkSplitBrain, readRecordFile, readRecords, refusedWrites } from './chaos-records.js';
import { recordResult, trace } from './results.js';

// @ts-expect-error plain ESM script without types
const { ensureBuilt } = (await import('../../../scripts/build.mjs')) as { ensureBuilt: () => Promise<unknown> };

const SOAK = process.env.SOAK === '1';
/** Bounded in `npm test` (CI budget); `npm run test:soak` runs ten minutes. */
const RUN_MS = SOAK ? 600_000 : 60_000;
const FAULT_EVERY_MS = SOAK ? 8_000 : 3_000;
const SHARDS = 16;
const MEETINGS = 3;
/** Successful steps each agent must make in the run: every agent, not just some, makes progress. */
const MIN_STEPS = SOAK ? 100 : 10;
/** Stops/kills and freezes the run does at least (it runs past RUN_MS on a slow machine to reach them). */
const MIN_FAULTS = SOAK ? { kills: 30, freezes: 10 } : { kills: 5, freezes: 1 };
/** Lease samples per second the sampler must sustain (nominal 10). */
const MIN_SAMPLE_RATE = 2;
/** A meeting read or write that only transient failures keep from succeeding is retried this long. */
const SETTLE_MS = 120_000;
/**
 * After the run, every agent ends its step within this: the longest step is a connect (20 s at most)
 * and four acknowledged calls (10 s each). An agent still in a step after it is a finding, named.
 */
const AGENTS_STOP_MS = 120_000;
const recordRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../.local/chaos-records');
const isSeq = (d: { seq?: unknown }) => typeof d?.seq === 'number';

interface Acked {
  seq: number;
  action: string;
}

describe('faults: chaos run over three hub nodes', () => {
  const id = uniqueId();
  // Each run records into its own directory: the single-Redis and the Redis Cluster runs go at once.
  const recordDir = path.join(recordRoot, id);
  const shared = {
    ROLES: 'http,hub,actors',
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
    ACTOR_SHARDS: String(SHARDS),
    ACTOR_LEASE_MS: '1500',
    ACCESS_TOKEN_TTL_SECONDS: '3600',
  };
  const cluster = new ChaosCluster(shared, recordDir);
  const ctx = new ChaosContext(() => cluster.liveUrls());
  const users: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const events: { id: string; code: string }[] = [];
  let anchor: TestNode;
  let sampleRun: LeaseSampler | undefined;
  /** When the records' window opens: before the first node starts, so every record of the run is in it. */
  let t0 = 0;

  /**
   * Everything before the run: the build the nodes start from, users, meetings, the three nodes (one
   * after another) and each meeting started. The run's own time (RUN_MS, its cap, jest's limit for the
   * test) counts from when all that is done, so a slow start on a loaded machine takes none of it.
   */
  beforeAll(
    async () => {
      // The anchor only provisions users and tokens and reads Redis; it hosts no hub and no actors.
      rmSync(recordDir, { recursive: true, force: true });
      mkdirSync(recordDir, { recursive: true });
      await ensureBuilt();
      anchor = await startTestNode({ ...shared, ROLES: 'http' });
      const people = [
        ['alice', 'clinician'],
        ['bob', 'clinician'],
        ['carol', 'patient'],
        ['dave', 'patient'],
        ['hs', 'device'],
      ] as const;
      for (const [u, role] of people) {
        users[u] = await createUser(anchor, 'acme', {
          username: u,
          role,
          kind: role === 'device' ? 'device' : 'person',
        });
        tokens[u] = await tokenFor(anchor, 'acme', u);
      }
      await registerHardware(anchor, 'acme', 'HS-CHAOS-1', users.hs!);
      const host = await anchor.services.auth.verifyAccessToken('acme', tokens.alice!);
      for (let i = 0; i < MEETINGS; i++) {
        const now = Date.now();
        const e = await anchor.services.events.create(host, {
          name: `Chaos ${i}`,
          startAt: new Date(now).toISOString(),
          endAt: new Date(now + 7_200_000).toISOString(),
          participants: [{ userId: users.bob!, role: 'participant' }],
          attachments: [],
        });
        events.push({ id: String(e._id), code: String(e.meetingCode) });
      }
      t0 = probeClock();
      await cluster.start();
      trace('chaos: cluster up');
      sampleRun = new LeaseSampler(
        anchor.infra.redis,
        shared.REDIS_PREFIX,
        Array.from({ length: SHARDS }, (_, i) => i),
      );
      sampleRun.start();
      // Meetings start before anyone joins: a participant's "not started" later would be lost state.
      for (const e of events) await settled(anyNode, 'getMeetingDetails', { eventId: e.id });
      trace('chaos: meetings started');
    },
    cluster.size * START_TIMEOUT_MS + 4 * SETTLE_MS,
  );

  afterAll(async () => {
    trace('chaos: cleanup');
    ctx.stopped = true;
    sampleRun?.stop();
    await cluster.destroy();
    await dropPrefix(anchor, shared.REDIS_PREFIX).catch(() => undefined);
    await anchor.destroy();
  }, 120_000);

  const acked: Acked[][] = Array.from({ length: MEETINGS }, () => []);
  const lastAcked = (m: number) => acked[m]!.at(-1)?.seq ?? 0;

  /** The host notifies in a loop; every acknowledged seq is remembered. */
  function hostAgent(m: number) {
    const eventId = events[m]!.id;
    const s = new Session(ctx, tokens.alice!, (c) => callLive(c, 'initEvent', { eventId }));
    let k = 0;
    return loop(ctx, `host${m}`, 100, async () => {
      const c = await s.ready();
      const d = c && take(ctx, await callLive(c, 'notify', `m${m}-${k++}`, { eventId }), isSeq);
      if (!d) return false;
      acked[m]!.push({ seq: d.seq, action: `m${m}-${k - 1}` });
      return true;
    }).finally(() => s.close());
  }

  /** A participant reads the meeting: it must never see less than what was acknowledged before it asked. */
  function participantAgent(m: number) {
    const eventId = events[m]!.id;
    const s = new Session(ctx, tokens.bob!, (c) => callLive(c, 'joinEvent', { eventId }));
    return loop(ctx, `participant${m}`, 250, async () => {
      const c = await s.ready();
      const floor = lastAcked(m);
      const d =
        c &&
        take(
          ctx,
          await callLive(c, 'getMeetingDetails', { eventId }),
          (x: { seq?: unknown; members?: unknown }) => isSeq(x) && Array.isArray(x.members),
        );
      if (!d) return false;
      if (d.seq < floor) ctx.violations.push(`meeting ${m}: read seq ${d.seq} after seq ${floor} was acknowledged`);
      return true;
    }).finally(() => s.close());
  }

  /** Calls carol -> dave: init, accept, end; an acknowledged end must stay ended. */
  function callAgent() {
    const none = async () => ({ ok: true as const, data: undefined });
    const [caller, callee] = [new Session(ctx, tokens.carol!, none), new Session(ctx, tokens.dave!, none)];
    const any = () => true;
    return loop(ctx, 'calls', 200, async () => {
      const [c, d] = [await caller.ready(), await callee.ready()];
      const call =
        c &&
        d &&
        take(
          ctx,
          await callLive(c, 'initCall', { calleeIds: [users.dave], callType: 'audio' }),
          (x: { callId?: unknown }) => typeof x?.callId === 'string',
        );
      if (!call) return false;
      const callId = call.callId;
      if (
        !take(ctx, await callLive(d!, 'acceptCall', { callId }), any) ||
        !take(ctx, await callLive(c!, 'endCall', { callId }), any)
      )
        return false;
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
    return loop(ctx, 'headset', 300, async () => {
      const c = await s.ready();
      const d =
        c &&
        take(
          ctx,
          await callLive(c, 'deviceStatus', eventId, {
            deviceId: 'HS-CHAOS-1',
            batteryLevel: (battery = battery > 1 ? battery - 1 : 100),
          }),
          () => true,
        );
      return d !== undefined;
    }).finally(() => s.close());
  }

  /** Retries a method (after initEvent) through the transient errors a settling cluster may still give. */
  async function settled<T = any>(
    url: (() => string) | string,
    method: 'getMeetingDetails' | 'notify',
    ...args: unknown[]
  ): Promise<T> {
    for (const until = Date.now() + SETTLE_MS; Date.now() < until;) {
      const c = await connect(typeof url === 'string' ? url : url(), 'acme', { token: tokens.alice }).catch(
        () => undefined,
      );
      const r = c
        ? await callLive<T>(c, 'initEvent', args.at(-1)).then((j) => (j.ok ? callLive<T>(c, method, ...args) : j))
        : undefined;
      c?.close();
      if (r?.ok) return r.data;
      if (r && !TRANSIENT.has(r.error.code)) throw new Error(`${method}: ${r.error.code} ${r.error.message}`);
      await pause(500);
    }
    throw new Error(`${method} did not settle`);
  }
  const anyNode = () => ctx.pickUrl();

  /** During a freeze: makes the node at `url` serve the frozen meeting, so it takes the shard under a newer epoch. */
  async function poke(actor: string, url: string): Promise<void> {
    const eventId = parseAddressKey(actor)!.id;
    await settled(url, 'getMeetingDetails', { eventId });
  }

  /** A serving node that holds one of the meetings' leases now (a freeze there catches a meeting write). */
  async function meetingHolder(): Promise<string | undefined> {
    const keys = actorKeys(`${shared.REDIS_PREFIX}actors:`);
    const shards = events.map((e) => shardOf({ tenant: 'acme', kind: 'meeting', id: e.id }, SHARDS));
    const holders = (await Promise.all(shards.map((sh) => anchor.infra.redis.get(keys.lease(sh))))).flatMap((v) =>
      v ? [v.slice(0, v.lastIndexOf('|'))] : [],
    );
    return cluster.servingIds().find(({ id }) => holders.includes(id))?.id;
  }

  it(
    'loses no acknowledged state, never lets two owners of a shard write at once, and converges',
    async () => {
      const sampler = sampleRun!;
      const agents = [...events.flatMap((_, m) => [hostAgent(m), participantAgent(m)]), callAgent(), headsetAgent()];
      trace('chaos: agents running');
      const runStart = Date.now();
      await cluster.chaos(
        { until: runStart + RUN_MS, cap: runStart + 4 * RUN_MS, everyMs: FAULT_EVERY_MS, min: MIN_FAULTS },
        meetingHolder,
        poke,
      );
      ctx.stopped = true;
      trace(
        `chaos: faults ${JSON.stringify(cluster.kills)}, freezes ${JSON.stringify(cluster.freezes)}, progress ${JSON.stringify(ctx.progress)}, failures ${JSON.stringify(Object.fromEntries(ctx.failures))} ${JSON.stringify(ctx.details)}`,
      );
      // Every agent stops: one hung in a step (a connect that never settled did) is named, not waited out.
      const stopped = await within(
        Promise.all(agents).then(() => true),
        AGENTS_STOP_MS,
      );
      expect({ agentsStillInAStep: stopped ? [] : [...ctx.inStep] }).toEqual({ agentsStillInAStep: [] });
      sampler.stop();
      trace('chaos: agents stopped');

      // Each survivor's fenced-write counter counts exactly the refusals it recorded (read around the scrape).
      const fencedOnSurvivors: { node: string; before: number; metric: number; after: number }[] = [];
      for (const { slot, id: node } of cluster.servingIds()) {
        const before = refusedWrites(readRecordFile(cluster.recordFile(node)));
        const metric = await cluster.counter(slot, 'actor_fenced_writes_total');
        fencedOnSurvivors.push({
          node,
          before,
          metric,
          after: refusedWrites(readRecordFile(cluster.recordFile(node))),
        });
      }

      const keys = actorKeys(`${shared.REDIS_PREFIX}actors:`);
      for (let m = 0; m < MEETINGS; m++) {
        const eventId = events[m]!.id;
        const seqs = acked[m]!.map((a) => a.seq);
        expect(seqs.length).toBeGreaterThan(0);
        seqs.forEach((seq, i) => i > 0 && expect(seq).toBeGreaterThan(seqs[i - 1]!));
        const final = await settled(anyNode, 'getMeetingDetails', { eventId });
        trace(`chaos: meeting ${m} settled at seq ${final.seq}, last acked ${lastAcked(m)}`);
        expect(final.seq).toBeGreaterThanOrEqual(lastAcked(m));
        // The headset joins meeting 0 through the meeting's own join (decision 1010): a member like a person.
        const members = m === 0 ? [users.alice, users.bob, users.hs] : [users.alice, users.bob];
        expect(final.members.map((x: { userId: string }) => x.userId).sort()).toEqual(members.sort());
        const after = await settled(anyNode, 'notify', 'after-chaos', { eventId });
        expect(after.seq).toBeGreaterThan(final.seq);
        const address = { tenant: 'acme', kind: 'meeting' as const, id: eventId };
        const shard = shardOf(address, SHARDS);
        const [lease, snap] = await anchor.infra.redis.mget(
          keys.lease(shard),
          keys.snapshot(shard, addressKey(address)),
        );
        expect(cluster.liveIds()).toContain(lease!.slice(0, lease!.lastIndexOf('|')));
        expect(JSON.parse(snap!).epoch).toBe(Number(lease!.slice(lease!.lastIndexOf('|') + 1)));
      }

      const t1 = probeClock();
      const records = readRecords(recordDir);
      const brain = checkSplitBrain(records);
      const outOfRun = [...records.acquires.map((a) => a.at), ...records.turns.map((t) => t.start)].filter(
        (t) => t < t0 || t > t1,
      ).length;
      const survivors = new Set(cluster.liveIds());
      const acquired = new Set(records.acquires.map((a) => `${a.shard}/${a.epoch}/${a.node}`));
      const unrecordedLeases = sampler
        .seen()
        .filter((x) => survivors.has(x.node) && !acquired.has(`${x.shard}/${x.epoch}/${x.node}`));
      const result = {
        runMs: RUN_MS,
        wallMs: Date.now() - runStart,
        faults: cluster.kills,
        freezes: cluster.freezes,
        freezesMissed: cluster.freezesMissed,
        progress: ctx.progress,
        failures: Object.fromEntries(ctx.failures),
        leaseSamples: sampler.samples,
        sampleRate: Number(sampler.rate().toFixed(1)),
        sampleErrors: sampler.errors,
        epochsSeen: sampler.epochsSeen(),
        records: {
          acquires: records.acquires.length,
          turns: brain.turns,
          writes: brain.writes,
          accepted: brain.accepted,
          refused: brain.refused,
          superseded: brain.superseded,
        },
        fencedOnSurvivors,
        splitBrain: brain.violations.length,
        violations: ctx.violations.length,
      };
      recordResult('chaos', result);
      trace(`chaos: ${JSON.stringify(result)}`);

      // Safety, from what every node recorded (holds whatever the machine's load).
      expect(brain.violations.slice(0, 10)).toEqual([]);
      expect(outOfRun).toBe(0);
      expect(unrecordedLeases).toEqual([]);
      expect(brain.turns).toBeGreaterThan(0);
      // Each freeze left a write of a superseded epoch in flight: the store refused it, and it was counted.
      expect(cluster.freezes.length).toBeGreaterThanOrEqual(MIN_FAULTS.freezes);
      for (const f of cluster.freezes) {
        expect({ node: f.node, accepted: f.accepted }).toEqual({ node: f.node, accepted: false });
        expect(f.fenced.metric).toBeGreaterThanOrEqual(Math.max(1, f.fenced.before));
        expect(f.fenced.metric).toBeLessThanOrEqual(f.fenced.after);
      }
      expect(brain.superseded).toBeGreaterThanOrEqual(cluster.freezes.length);
      for (const f of fencedOnSurvivors) {
        expect(f.metric).toBeGreaterThanOrEqual(f.before);
        expect(f.metric).toBeLessThanOrEqual(f.after);
      }
      expect(sampler.sharedEpochs()).toEqual([]);
      expect(sampler.regressions).toEqual([]);
      // Client-visible: nothing acknowledged lost, every failure transient.
      expect(ctx.violations).toEqual([]);
      expect(ctx.unexpected()).toEqual({});
      expect({ details: ctx.details }).toEqual({ details: [] });
      // The run did what it claims: faults, samples, progress of every agent.
      expect(cluster.kills.sigkill + cluster.kills.sigterm).toBeGreaterThanOrEqual(MIN_FAULTS.kills);
      expect(sampler.errors).toBe(0);
      expect(sampler.samples).toBeGreaterThan(0);
      expect(sampler.rate()).toBeGreaterThanOrEqual(MIN_SAMPLE_RATE);
      expect(Object.keys(ctx.progress).sort()).toEqual(
        ['calls', 'headset', ...events.flatMap((_, m) => [`host${m}`, `participant${m}`])].sort(),
      );
      for (const [agent, steps] of Object.entries(ctx.progress))
        expect({ agent, enough: steps >= MIN_STEPS }).toEqual({ agent, enough: true });
    },
    4 * RUN_MS + 360_000,
  );
});
