/**
 * B1: hub RPC through a local actor. Clients call getMeetingDetails (emitWithAck -> handshake-
 * authenticated socket -> validation and permission -> meeting actor turn on this node -> ack) on
 * one node running http, hub and actors; the baseline is a bare Socket.IO echo server under the same
 * client load. Closed loop gives the throughput; an open loop at a fixed rate gives p50/p99.
 */
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { startBaseline, missingModules, missingRoles, firstReason, logFile } from './harness/sides.js';
import { runLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import { HubCluster, HUB_PATH, type BenchUser } from './harness/hub-cluster.js';
import type { HostProcess } from './harness/hosts.js';
import { connectSio } from './load/sio-client.js';

/**
 * The hub allows each socket 20 calls/s (burst 60): 200 connections keep 2k RPC/s at 10 calls/s per
 * socket, and the closed loop (one call in flight per socket) stays under the limit too.
 */
export const rpcSettings = {
  conns: scaled(200, 20),
  inflight: 1,
  closedMs: scaled(4000, 1500),
  openRate: scaled(2000, 300),
  openMs: scaled(4000, 1500),
  warmupMs: scaled(1000, 300),
};

export interface RpcTarget {
  url: string;
  host?: string;
  path: string;
  tokens: string[];
  eventIds: string[];
  /** The serving process (one node): the closed loop reports its CPU per call. */
  serverPid?: number;
  /** The node that owns the actors when it is not the serving one (B2): its CPU per call as well. */
  ownerPid?: number;
}

/** Runs the closed-loop and the open-loop phase against one target; figures of one round. */
export async function rpcRound(
  ctx: BenchContext,
  bench: string,
  label: string,
  i: number,
  t: RpcTarget,
): Promise<Figures> {
  const s = rpcSettings;
  const base = {
    url: t.url,
    host: t.host,
    path: t.path,
    tokens: t.tokens,
    conns: s.conns,
    event: 'getMeetingDetails',
    args: t.eventIds.map((eventId) => [{ eventId }]),
    setup: { event: 'initEvent', args: t.eventIds.map((eventId) => [{ eventId }]) },
    warmupMs: s.warmupMs,
  };
  const closed = await runLoad(
    'socket-rpc',
    {
      ...base,
      mode: 'closed',
      inflight: s.inflight,
      durationMs: s.closedMs,
      deadlineMs: s.closedMs + 180_000,
      serverPid: t.serverPid,
      ownerPid: t.ownerPid,
    },
    logFile(ctx, `${bench}-load-${label}-closed-${i}`),
  );
  const open = await runLoad(
    'socket-rpc',
    { ...base, mode: 'open', rate: s.openRate, durationMs: s.openMs, deadlineMs: s.openMs + 180_000 },
    logFile(ctx, `${bench}-load-${label}-open-${i}`),
  );
  for (const r of [closed, open]) if (r.errors) ctx.log(`  ${label}: ${r.errors} failed calls, first: ${r.firstError}`);
  const failed = (closed.errors + open.errors) / Math.max(1, closed.ok + closed.errors + open.ok + open.errors);
  return {
    throughput_per_s: closed.throughput_per_s,
    closed_p99_ms: closed.p99_ms,
    open_rate_per_s: open.throughput_per_s,
    p50_ms: open.p50_ms,
    p99_ms: open.p99_ms,
    failed_ratio: failed,
    reply_bytes: closed.reply_bytes,
    ...(closed.server_cpu_us_per_call === undefined ? {} : { server_cpu_us_per_call: closed.server_cpu_us_per_call }),
    ...(closed.owner_cpu_us_per_call === undefined ? {} : { owner_cpu_us_per_call: closed.owner_cpu_us_per_call }),
  };
}

/** One user per connection, each organizing its own event (so turns spread over many actors). */
export async function provision(cluster: HubCluster, perUser = 1): Promise<{ users: BenchUser[]; events: string[][] }> {
  await cluster.tenant();
  const users = await cluster.users('host', rpcSettings.conns, 'clinician');
  const events: string[][] = [];
  for (let k = 0; k < perUser; k++) events.push(await cluster.events(users.map((u) => u.id)));
  return { users, events };
}

/**
 * The product's answer to the benchmark's call, as its first client would get it (after the set-up
 * call): the baseline answers every call with it (decision 1147).
 */
export async function recordReply(t: RpcTarget): Promise<unknown> {
  const socket = await connectSio({ url: t.url, path: t.path, host: t.host, token: t.tokens[0] });
  try {
    const args = [{ eventId: t.eventIds[0] }];
    const setup = (await socket.timeout(60_000).emitWithAck('initEvent', ...args)) as { ok?: boolean };
    const reply = (await socket.timeout(60_000).emitWithAck('getMeetingDetails', ...args)) as { ok?: boolean };
    if (setup?.ok !== true || reply?.ok !== true) throw new Error(`recording the reply: ${JSON.stringify(reply)}`);
    return reply;
  } finally {
    socket.disconnect();
  }
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const cluster = HubCluster.create(ctx, 'b01');
  let target: RpcTarget | undefined;
  let reply: unknown;
  let echo: HostProcess | undefined;
  return {
    product: {
      label: 'product',
      async start() {
        await cluster.addNode();
        const { users, events } = await provision(cluster);
        target = {
          ...cluster.target(0),
          path: HUB_PATH,
          tokens: users.map((u) => u.token),
          eventIds: events[0]!,
          serverPid: cluster.node(0).pid,
        };
        reply = await recordReply(target);
      },
      round: (i) => rpcRound(ctx, 'b01', 'product', i, target!),
      stop: () => cluster.stop(),
    },
    baseline: {
      label: 'bare socket.io, same reply',
      async start() {
        echo = await startBaseline(ctx, 'b01', 'socketio-echo.server.ts', { reply });
      },
      round: (i) =>
        rpcRound(ctx, 'b01', 'baseline', i, {
          url: echo!.info.url,
          path: echo!.info.path,
          tokens: [],
          eventIds: target?.eventIds ?? ['0'],
          serverPid: echo!.pid,
        }),
      stop: async () => echo?.stop(),
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b01',
  title: 'Hub RPC through a local actor (getMeetingDetails): throughput, p50/p99',
  target: '>= 70% of baseline throughput; p99 <= 5 ms at 2k RPC/s',
  baselineName: "bare Socket.IO server answering every call with the product's reply (same bytes)",
  rounds: scaled(3, 1),
  settings: rpcSettings,
  ratioFigure: 'throughput_per_s',
  unavailable: () => firstReason(missingRoles('hub', 'actors'), missingModules('test/support/auth.ts')),
  sides: async (ctx) => sides(ctx),
  checks: (p, _b, ratio) => [
    check('throughput ratio', ratio, 'min', 0.7),
    check('p99 ms at open rate', p.p99_ms, 'max', 5),
    check('open rate reached (RPC/s)', p.open_rate_per_s, 'min', rpcSettings.openRate * 0.95),
    check('failed calls ratio', p.failed_ratio, 'max', 0),
  ],
};
