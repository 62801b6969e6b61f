/**
 * B4: meeting fan-out. 100 participants spread over two product nodes join one meeting; the host
 * sends `notify` messages; each becomes one meetingEvent (meeting actor turn, snapshot, push through
 * the hub's adapter) delivered to every participant on both nodes. Latency = send -> receipt, per
 * delivery. The baseline is two bare Socket.IO servers on the Redis adapter broadcasting to a room.
 */
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { startBaseline, missingModules, missingRoles, firstReason, logFile } from './harness/sides.js';
import { runLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import { HubCluster, HUB_PATH } from './harness/hub-cluster.js';
import type { HostProcess } from './harness/hosts.js';

const settings = {
  participants: scaled(100, 20),
  nodes: 2,
  messages: scaled(200, 30),
  /** The host's socket may make 20 calls/s: one notify every 60 ms stays under it. */
  intervalMs: 60,
};

interface FanoutTarget {
  targets: { url: string; host?: string }[];
  path: string;
  tokens: string[];
  hostToken?: string;
  hostJoin: { event: string; args: unknown[] };
  join: { event: string; args: unknown[] };
  send: { event: string; args: unknown[] };
}

async function round(ctx: BenchContext, label: string, i: number, t: FanoutTarget): Promise<Figures> {
  const r = await runLoad(
    'fanout',
    {
      ...t,
      participants: settings.participants,
      receive: 'meetingEvent',
      messages: settings.messages,
      intervalMs: settings.intervalMs,
      deadlineMs: 180_000,
    },
    logFile(ctx, `b04-load-${label}-${i}`),
  );
  return { deliveries: r.deliveries, missing: r.missing, p50_ms: r.p50_ms, p99_ms: r.p99_ms, max_ms: r.max_ms };
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const cluster = HubCluster.create(ctx, 'b04');
  const servers: HostProcess[] = [];
  let product: FanoutTarget | undefined;
  return {
    product: {
      label: 'product',
      async start() {
        await cluster.addNode();
        await cluster.addNode();
        await cluster.tenant();
        const [host] = await cluster.users('host', 1, 'clinician');
        const people = await cluster.users('p', settings.participants, 'patient');
        const [eventId] = await cluster.events(
          [host!.id],
          people.map((u) => u.id),
        );
        product = {
          targets: [cluster.target(0), cluster.target(1)],
          path: HUB_PATH,
          tokens: people.map((u) => u.token),
          hostToken: host!.token,
          hostJoin: { event: 'initEvent', args: [{ eventId }] },
          join: { event: 'joinEvent', args: [{ eventId }] },
          send: { event: 'notify', args: ['bench', { eventId, data: { mark: '$MARK' } }] },
        };
      },
      round: (i) => round(ctx, 'product', i, product!),
      stop: () => cluster.stop(),
    },
    baseline: {
      label: 'bare adapter broadcast',
      async start() {
        const key = `${cluster.env.REDIS_PREFIX}baseline-adapter`;
        for (let n = 0; n < settings.nodes; n++)
          servers.push(
            await startBaseline(ctx, 'b04', 'adapter-broadcast.server.ts', {
              redisUrl: ctx.redisUrl,
              key,
              sharded: true,
            }),
          );
      },
      round: (i) =>
        round(ctx, 'baseline', i, {
          targets: servers.map((s) => ({ url: s.info.url })),
          path: '/socket.io',
          tokens: ['-'],
          hostJoin: { event: 'join', args: ['room1'] },
          join: { event: 'join', args: ['room1'] },
          send: { event: 'notify', args: ['room1', { mark: '$MARK' }] },
        }),
      stop: async () => {
        await Promise.all(servers.map((s) => s.stop()));
      },
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b04',
  title: 'Meeting fan-out, 100 participants on 2 nodes: delivery latency',
  target: 'p99 <= 50 ms',
  baselineName: 'bare Redis-adapter broadcast, 2 servers',
  rounds: scaled(3, 1),
  settings,
  ratioFigure: 'p99_ms',
  unavailable: () => firstReason(missingRoles('hub', 'actors'), missingModules('test/support/auth.ts')),
  sides: async (ctx) => sides(ctx),
  checks: (p) => [check('p99 ms', p.p99_ms, 'max', 50), check('missing deliveries', p.missing, 'max', 0)],
};
