/**
 * B3: authenticated idle hub connections held by one node. Several client processes open
 * `connections` Socket.IO connections (each handshake verifies an access token, registers presence
 * and joins the user's rooms), then hold them idle. Memory per connection = (RSS after full GC with
 * the connections - RSS after full GC before) / connections, on a fresh server each round. The
 * baseline is a bare Socket.IO server under the same clients.
 */
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { startBaseline, missingModules, missingRoles, firstReason, roundsOnly } from './harness/sides.js';
import { openIdleClients } from './harness/idle-clients.js';
import { scaled } from './harness/scale.js';
import { HubCluster, HUB_PATH } from './harness/hub-cluster.js';
import type { HostProcess } from './harness/hosts.js';

const settings = {
  connections: scaled(10_000, 300),
  clientProcesses: scaled(4, 1),
  users: scaled(200, 20),
  parallelHandshakesPerProcess: 50,
  nofile: 19_000,
};
const MiB = 2 ** 20;

/** Opens the connections from several processes, measures the server, closes them. */
async function hold(
  ctx: BenchContext,
  label: string,
  i: number,
  server: HostProcess,
  target: { url: string; host?: string; path: string; tokens: string[] },
): Promise<Figures> {
  const before = await server.mem();
  const clients = await openIdleClients(
    ctx,
    `b03-load-${label}-${i}`,
    Array.from({ length: settings.clientProcesses }, (_, k) => ({
      ...target,
      tokens: target.tokens.slice(k).concat(target.tokens.slice(0, k)),
    })),
    {
      perProcess: Math.ceil(settings.connections / settings.clientProcesses),
      parallel: settings.parallelHandshakesPerProcess,
      nofile: settings.nofile,
      deadlineMs: 420_000,
    },
  );
  try {
    const after = await server.mem();
    const { held } = clients;
    return {
      connections: held,
      rss_per_conn_kib: (after.rss - before.rss) / held / 1024,
      heap_per_conn_kib: (after.heapUsed - before.heapUsed) / held / 1024,
      // Where RSS beyond the live heap goes: V8's heap as committed (live objects and the space the
      // collector keeps), and memory outside it (Buffers, native).
      heap_total_per_conn_kib: (after.heapTotal - before.heapTotal) / held / 1024,
      external_per_conn_kib: (after.external - before.external) / held / 1024,
      rss_mib: after.rss / MiB,
      connect_per_s: held / clients.connectS,
    };
  } finally {
    await clients.close();
  }
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  let tokens: string[] = [];
  let cluster: HubCluster | undefined;
  const productRound = async (i: number) => {
    cluster = HubCluster.create(ctx, 'b03');
    try {
      await cluster.addNode({ nofile: settings.nofile });
      await cluster.tenant();
      tokens = (await cluster.users('idle', settings.users, 'patient')).map((u) => u.token);
      return await hold(ctx, 'product', i, cluster.node(0), { ...cluster.target(0), path: HUB_PATH, tokens });
    } finally {
      await cluster.stop();
    }
  };
  const baselineRound = async (i: number) => {
    const echo = await startBaseline(ctx, 'b03', 'socketio-echo.server.ts', {}, { nofile: settings.nofile });
    try {
      return await hold(ctx, 'baseline', i, echo, { url: echo.info.url, path: echo.info.path, tokens });
    } finally {
      await echo.stop();
    }
  };
  return { product: roundsOnly('product', productRound), baseline: roundsOnly('bare socket.io', baselineRound) };
}

export const benchmark: Benchmark = {
  id: 'b03',
  title: 'Authenticated idle hub connections on one node: memory per connection',
  target: '>= 10k connections; <= 1.2x baseline memory per connection',
  baselineName: 'bare Socket.IO server',
  rounds: scaled(3, 1),
  settings,
  ratioFigure: 'rss_per_conn_kib',
  unavailable: () => firstReason(missingRoles('hub', 'actors'), missingModules('test/support/auth.ts')),
  sides: async (ctx) => sides(ctx),
  checks: (p, _b, ratio) => [
    check('connections held', p.connections, 'min', 10_000),
    check('memory ratio', ratio, 'max', 1.2),
  ],
};
