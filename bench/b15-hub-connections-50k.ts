/**
 * B15: 50,000 authenticated hub connections over three nodes (issue 39 §3): the RSS each node holds
 * and the latency of hub calls made while they are connected. Client processes (two per node) open
 * the connections (each handshake verifies an access token, registers presence, joins the user's
 * rooms) and hold them idle; then clinicians on every node call `getMeetingDetails` at a fixed total
 * rate (open loop) and the p50/p99 of the worst node is taken. Memory per connection = the nodes' RSS
 * growth (each after a full GC) over the connections held. A fresh cluster every round. The baseline
 * is three bare Socket.IO echo servers under the same clients and the same calls.
 */
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { startBaseline, missingModules, missingRoles, firstReason, logFile, roundsOnly } from './harness/sides.js';
import { runLoad } from './harness/load.js';
import { openIdleClients } from './harness/idle-clients.js';
import { scaled } from './harness/scale.js';
import { HubCluster, HUB_PATH } from './harness/hub-cluster.js';
import type { HostProcess } from './harness/hosts.js';

const settings = {
  connections: scaled(50_000, 600),
  nodes: 3,
  /** Client processes per node: one process's handshakes run on one core at most. */
  clientProcessesPerNode: 2,
  users: scaled(500, 20),
  parallelHandshakesPerProcess: 50,
  nofile: 30_000,
  /** The calls made while the connections are held: connections per node, total rate over the nodes. */
  probeConnsPerNode: scaled(20, 4),
  probeRate: scaled(300, 60),
  probeMs: scaled(5000, 1500),
  probeWarmupMs: 500,
};
const MiB = 2 ** 20;

interface Target {
  url: string;
  host?: string;
  path: string;
}

interface RoundTargets {
  servers: HostProcess[];
  targets: Target[];
  /** Tokens of the idle connections. */
  idleTokens: string[];
  /** Per node: the probe's tokens and the meeting each of its connections reads. */
  probe: { tokens: string[]; eventIds: string[] };
}

/** Opens the connections over the nodes, measures each node, calls while they are held, closes them. */
async function hold(ctx: BenchContext, label: string, i: number, t: RoundTargets): Promise<Figures> {
  const before = await Promise.all(t.servers.map((s) => s.mem()));
  const processes = t.servers.length * settings.clientProcessesPerNode;
  const clients = await openIdleClients(
    ctx,
    `b15-load-${label}-${i}`,
    Array.from({ length: processes }, (_, k) => ({
      ...t.targets[k % t.targets.length]!,
      tokens: t.idleTokens.slice(k).concat(t.idleTokens.slice(0, k)),
    })),
    {
      perProcess: Math.ceil(settings.connections / processes),
      parallel: settings.parallelHandshakesPerProcess,
      nofile: settings.nofile,
      deadlineMs: 900_000,
    },
  );
  try {
    const { held, connectS } = clients;
    const after = await Promise.all(t.servers.map((s) => s.mem()));
    const calls = await Promise.all(
      t.targets.map((target, n) =>
        runLoad(
          'socket-rpc',
          {
            ...target,
            tokens: t.probe.tokens,
            conns: settings.probeConnsPerNode,
            event: 'getMeetingDetails',
            args: t.probe.eventIds.map((eventId) => [{ eventId }]),
            setup: { event: 'initEvent', args: t.probe.eventIds.map((eventId) => [{ eventId }]) },
            mode: 'open',
            rate: settings.probeRate / t.targets.length,
            warmupMs: settings.probeWarmupMs,
            durationMs: settings.probeMs,
            deadlineMs: settings.probeMs + 300_000,
          },
          logFile(ctx, `b15-probe-${label}-${i}-${n}`),
        ),
      ),
    );
    for (const c of calls) if (c.errors) ctx.log(`  ${label}: ${c.errors} failed calls, first: ${c.firstError}`);
    const growth = after.reduce((sum, a, n) => sum + (a.rss - before[n]!.rss), 0);
    return {
      connections: held,
      rss_per_conn_kib: growth / held / 1024,
      heap_per_conn_kib: after.reduce((sum, a, n) => sum + (a.heapUsed - before[n]!.heapUsed), 0) / held / 1024,
      rss_mib_max: Math.max(...after.map((a) => a.rss)) / MiB,
      rss_mib_mean: after.reduce((sum, a) => sum + a.rss, 0) / after.length / MiB,
      connect_per_s: held / connectS,
      call_rate_per_s: calls.reduce((sum, c) => sum + c.throughput_per_s, 0),
      call_p50_ms: Math.max(...calls.map((c) => c.p50_ms)),
      call_p99_ms: Math.max(...calls.map((c) => c.p99_ms)),
      failed_calls: calls.reduce((sum, c) => sum + c.errors, 0),
    };
  } finally {
    const dropped = await clients.close();
    if (dropped) ctx.log(`  ${label}: ${dropped} connections dropped while held`);
  }
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  let probe: RoundTargets['probe'] = { tokens: [], eventIds: ['0'] };
  let idleTokens: string[] = [];
  const productRound = async (i: number) => {
    const cluster = HubCluster.create(ctx, 'b15');
    try {
      for (let n = 0; n < settings.nodes; n++) await cluster.addNode({ nofile: settings.nofile });
      await cluster.tenant();
      idleTokens = (await cluster.users('idle', settings.users, 'patient', 4)).map((u) => u.token);
      const hosts = await cluster.users('host', settings.probeConnsPerNode, 'clinician');
      probe = { tokens: hosts.map((u) => u.token), eventIds: await cluster.events(hosts.map((u) => u.id)) };
      const servers = cluster.nodes.map((_, n) => cluster.node(n));
      const targets = servers.map((_, n) => ({ ...cluster.target(n), path: HUB_PATH }));
      return await hold(ctx, 'product', i, { servers, targets, idleTokens, probe });
    } finally {
      await cluster.stop();
    }
  };
  const baselineRound = async (i: number) => {
    const servers: HostProcess[] = [];
    try {
      for (let n = 0; n < settings.nodes; n++)
        servers.push(await startBaseline(ctx, 'b15', 'socketio-echo.server.ts', {}, { nofile: settings.nofile }));
      const targets = servers.map((s) => ({ url: s.info.url as string, path: s.info.path as string }));
      return await hold(ctx, 'baseline', i, {
        servers,
        targets,
        idleTokens: [],
        probe: { tokens: [], eventIds: probe.eventIds },
      });
    } finally {
      await Promise.allSettled(servers.map((s) => s.stop()));
    }
  };
  return {
    product: roundsOnly('product', productRound),
    baseline: roundsOnly('bare socket.io (three servers)', baselineRound),
  };
}

export const benchmark: Benchmark = {
  id: 'b15',
  title: '50,000 authenticated hub connections over three nodes: RSS per node, hub calls while held',
  target: '>= 50k connections held; <= 1.2x baseline memory per connection; 0 failed calls',
  baselineName: 'three bare Socket.IO servers',
  rounds: scaled(3, 1),
  settings,
  ratioFigure: 'rss_per_conn_kib',
  unavailable: () => firstReason(missingRoles('hub', 'actors'), missingModules('test/support/auth.ts')),
  sides: async (ctx) => sides(ctx),
  checks: (p, _b, ratio) => [
    check('connections held', p.connections, 'min', settings.connections),
    check('memory ratio', ratio, 'max', 1.2),
    check('failed calls', p.failed_calls, 'max', 0),
  ],
};
