/**
 * B2: hub RPC to an actor owned by another node. Two product nodes; every client is connected to
 * node A and calls meetings whose actor the runtime places on node B (request/ack over Redis). The
 * baseline is B1's path measured in the same cluster and run: the same clients calling meetings
 * whose actor lives on node A.
 */
import type { Benchmark, BenchContext, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { missingModules, missingRoles, firstReason } from './harness/sides.js';
import { scaled } from './harness/scale.js';
import { HubCluster, HUB_PATH } from './harness/hub-cluster.js';
import { provision, rpcRound, rpcSettings, type RpcTarget } from './b01-hub-rpc-local.js';

/** Events made per user at first; more are made until every user has one on each node. */
const CANDIDATES = 16;
/** The most events made per user before the set-up gives up (a placement that uneven is a defect). */
const MAX_CANDIDATES = 64;

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const cluster = HubCluster.create(ctx, 'b02');
  const targets: { remote?: RpcTarget; local?: RpcTarget } = {};
  return {
    product: {
      label: 'remote actor',
      async start() {
        await cluster.addNode();
        await cluster.addNode();
        const { users, events } = await provision(cluster, CANDIDATES);
        const [a, b] = cluster.nodeIds as [string, string];
        const find = (u: number, owner: string) =>
          events.map((e) => e[u]!).find((ev) => cluster.meetingOwner(ev) === owner);
        // The 256 shards may split unevenly between two nodes: one more event per user until each
        // user has an event on either node.
        const lacking = () => users.some((_, u) => !find(u, a) || !find(u, b));
        while (lacking() && events.length < MAX_CANDIDATES) events.push(await cluster.events(users.map((x) => x.id)));
        const pick = (owner: string) =>
          users.map((_, u) => {
            const id = find(u, owner);
            if (!id) throw new Error(`no event of user ${u} among ${events.length} is placed on ${owner}`);
            return id;
          });
        // The closed loop reports the CPU per call of node A (hub and, locally, owner) and of node B.
        const base = {
          ...cluster.target(0),
          path: HUB_PATH,
          tokens: users.map((u) => u.token),
          serverPid: cluster.node(0).pid,
          ownerPid: cluster.node(1).pid,
        };
        targets.remote = { ...base, eventIds: pick(b) };
        targets.local = { ...base, eventIds: pick(a) };
      },
      round: (i) => rpcRound(ctx, 'b02', 'remote', i, targets.remote!),
      stop: () => cluster.stop(),
    },
    baseline: {
      label: 'local actor (B1 path, same cluster)',
      start: async () => undefined,
      round: (i) => rpcRound(ctx, 'b02', 'local', i, targets.local!),
      stop: async () => undefined,
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b02',
  title: 'Hub RPC to an actor owned by another node: throughput, p50/p99',
  target: 'p99 <= 10 ms at 2k RPC/s; >= 60% of B1 throughput',
  baselineName: 'B1 (local actor, same cluster and clients)',
  rounds: scaled(3, 1),
  settings: { ...rpcSettings, nodes: 2, candidateEventsPerUser: CANDIDATES, maxCandidateEventsPerUser: MAX_CANDIDATES },
  ratioFigure: 'throughput_per_s',
  unavailable: () => firstReason(missingRoles('hub', 'actors'), missingModules('test/support/auth.ts')),
  sides: async (ctx) => sides(ctx),
  checks: (p, _b, ratio) => [
    check('p99 ms at open rate', p.p99_ms, 'max', 10),
    check('throughput ratio to B1', ratio, 'min', 0.6),
    check('failed calls ratio', p.failed_ratio, 'max', 0),
  ],
};
