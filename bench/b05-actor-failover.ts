/**
 * B5: actor failover after a hard kill (SIGKILL) of the owner node. Each round starts a victim node
 * beside the surviving one, opens a meeting whose actor the runtime places on the victim, writes to it
 * through the survivor, kills the victim and measures the time until a call through the survivor
 * succeeds again (the survivor finds the victim's Redis connection gone and evicts it, decision 1116,
 * or its lease expires; re-claim with a higher epoch, re-activation from the snapshot). The
 * meeting's seq after failover must equal the last acknowledged one: nothing acknowledged lost and no
 * write accepted from the old owner. No baseline.
 */
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { missingModules, missingRoles, firstReason, spawnLoadLog } from './harness/sides.js';
import { spawnLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import { HubCluster, HUB_PATH, type BenchUser } from './harness/hub-cluster.js';
import { metricSum } from './harness/metrics.js';
import { percentile } from './harness/stats.js';

const sum = (xs: number[]) => xs.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);

const settings = {
  kills: scaled(3, 1),
  writesBeforeKill: 20,
  // The runtime defaults (src/config), so B5 measures failover as deployed.
  actorLeaseMs: 3000,
  actorConnectionPollMs: 250,
  candidateEvents: 16,
};

async function waitUntil(what: string, ms: number, ok: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} within ${ms} ms`);
}

async function killRound(ctx: BenchContext, cluster: HubCluster, host: BenchUser, i: number): Promise<Figures> {
  const victim = await cluster.addNode();
  // Both nodes must see each other before placement can put a shard on the victim: two heartbeats.
  await new Promise((r) => setTimeout(r, settings.actorLeaseMs));
  const candidates = await cluster.events(Array(settings.candidateEvents).fill(host.id));
  const eventId = candidates.find((e) => cluster.meetingOwner(e) === cluster.nodeIds[victim]);
  if (!eventId) throw new Error('no candidate meeting placed on the victim');
  const before = await metricSum(cluster.node(victim), 'actor_activations_total');
  const probe = spawnLoad(
    'failover-probe',
    {
      ...cluster.target(0),
      path: HUB_PATH,
      token: host.token,
      eventId,
      writes: settings.writesBeforeKill,
      probeEveryMs: 100,
      deadlineMs: 120_000,
    },
    { logFile: spawnLoadLog(ctx, `b05-probe-${i}`) },
  );
  const ready = await Promise.race([
    probe.when<{ lastSeq: number }>('ready'),
    probe.result.then(() => {
      throw new Error('probe ended early');
    }),
  ]);
  await waitUntil(
    'the meeting actor activated on the victim',
    5000,
    async () => (await metricSum(cluster.node(victim), 'actor_activations_total')) > before,
  );
  const at = Date.now();
  await cluster.node(victim).signal('SIGKILL');
  cluster.dropped(victim);
  probe.send({ type: 'killed', at });
  const r = await probe.result;
  return {
    failover_ms: r.failoverMs,
    lost_acked_writes: Math.max(0, ready.lastSeq - r.seqAfter),
    foreign_writes: Math.max(0, r.seqAfter - ready.lastSeq),
    write_after_ok: r.seqAfterWrite === r.seqAfter + 1 ? 1 : 0,
    failed_calls_during: r.failedCalls,
  };
}

function sides(ctx: BenchContext): { product: Side } {
  const cluster = HubCluster.create(ctx, 'b05', {
    ACTOR_LEASE_MS: String(settings.actorLeaseMs),
    ACTOR_CONNECTION_POLL_MS: String(settings.actorConnectionPollMs),
  });
  let host: BenchUser | undefined;
  return {
    product: {
      label: 'product',
      async start() {
        await cluster.addNode();
        await cluster.tenant();
        [host] = await cluster.users('host', 1, 'clinician');
      },
      round: (i) => killRound(ctx, cluster, host!, i),
      stop: () => cluster.stop(),
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b05',
  title: 'Actor failover after SIGKILL of the owner node: time to first successful call elsewhere',
  target: 'p99 <= 1.5 s, zero acknowledged writes lost, zero writes accepted from the old owner',
  baselineName: '-',
  rounds: settings.kills,
  settings,
  unavailable: () => firstReason(missingRoles('hub', 'actors'), missingModules('test/support/auth.ts')),
  sides: async (ctx) => sides(ctx),
  checks: (_p, _b, _r, rounds) => [
    // One sample per kill: the p99 of a handful of kills is the worst of them.
    check(
      'failover ms, p99 over kills',
      percentile(
        rounds.product.map((r) => r.failover_ms!),
        99,
      ),
      'max',
      1500,
    ),
    check('acknowledged writes lost (sum)', sum(rounds.product.map((r) => r.lost_acked_writes!)), 'max', 0),
    check('writes from the old owner (sum)', sum(rounds.product.map((r) => r.foreign_writes!)), 'max', 0),
  ],
};
