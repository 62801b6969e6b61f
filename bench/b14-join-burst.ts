/**
 * B14: meeting joins under a burst (issue 35: what the reconnect storm's rejoins cost). `clients`
 * authenticated hub connections on two product nodes, members of meetings of 10 opened by their hosts;
 * every client asks joinEvent at once (at most `burstInflight` in flight: a node's clients joining their
 * meetings again after a failover), then each asks it again in a closed loop for `loopMs` (a member's
 * join again, what a reconnected client does). A join is a meeting actor turn that reads the event and
 * the user, mints the join details and appends a `meeting.join` entry to the tenant's audit chain, the
 * one write every join shares with every other join of the tenant. The baseline is the same clients,
 * burst and loop asking getMeetingDetails: a meeting actor turn with reads and no write. After each
 * product round the chain is verified link by link from its first entry.
 */
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { missingModules, missingRoles, firstReason, logFile } from './harness/sides.js';
import { spawnLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import { HubCluster, HUB_PATH, TENANT, type BenchUser } from './harness/hub-cluster.js';

/** `BENCH_B14_CLIENTS=2500 npm run bench -- b14`: another size (partial.*). */
function clients(): number {
  const given = Number(process.env.BENCH_B14_CLIENTS);
  return Number.isInteger(given) && given > 0 ? given : scaled(1000, 100);
}

const settings = {
  clients: clients(),
  nodes: 2,
  meetingSize: 10,
  hosts: 10,
  burstInflight: Number(process.env.BENCH_B14_INFLIGHT) || scaled(1000, 100),
  loopMs: scaled(4000, 1500),
};

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

interface JoinResult {
  burstMs: number;
  burstOk: number;
  loopOk: number;
  firstError?: string;
  [figure: string]: number | string | undefined;
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const cluster = HubCluster.create(ctx, 'b14');
  let hosts: BenchUser[] = [];
  let people: BenchUser[] = [];

  const round = async (label: string, i: number, event: 'joinEvent' | 'getMeetingDetails'): Promise<Figures> => {
    const groups: string[][] = [];
    for (let x = 0; x < people.length; x++) (groups[Math.floor(x / settings.meetingSize)] ??= []).push(people[x]!.id);
    // New meetings every round: every burst is of first joins, every loop of joins again.
    const organizers = groups.map((_, g) => hosts[g % hosts.length]!);
    const ids = await cluster.meetings(
      organizers.map((h) => h.id),
      groups,
    );
    const load = spawnLoad<JoinResult>(
      'join-burst',
      {
        targets: [0, 1].map((x) => cluster.target(x)),
        path: HUB_PATH,
        clients: people.map((u, x) => ({ token: u.token, eventId: ids[Math.floor(x / settings.meetingSize)]! })),
        hosts: hosts.map((h, k) => ({ token: h.token, eventIds: ids.filter((_, g) => g % hosts.length === k) })),
        event,
        burstInflight: settings.burstInflight,
        loopMs: settings.loopMs,
        deadlineMs: 900_000,
      },
      { logFile: logFile(ctx, `b14-load-${label}-${i}`) },
    );
    let r: JoinResult;
    try {
      await Promise.race([
        load.when('ready'),
        load.result.then(() => {
          throw new Error('load finished before ready');
        }),
      ]);
      load.send({ type: 'start' });
      r = await load.result;
    } finally {
      load.kill();
    }
    if (r.firstError) ctx.log(`  ${label} round ${i + 1}: failed asks, first: ${r.firstError}`);
    ctx.log(
      `  ${label} round ${i + 1}: burst of ${r.burstOk} in ${Math.round(r.burstMs)} ms, ${r.loopOk} asks in the loop`,
    );
    const f: Figures = {};
    for (const [k, v] of Object.entries(r)) if (typeof v === 'number' && /^(burst|loop)_/.test(k)) f[k] = v;
    if (event === 'joinEvent') {
      const chain = await cluster.node(0).call<{ ok: boolean; verified: number; head: number }>('auditLinks', {
        tenant: TENANT,
      });
      f.chain_ok = chain.ok ? 1 : 0;
      f.chain_unverified = chain.head - chain.verified;
      if (!chain.ok) ctx.log(`  ${label} round ${i + 1}: the audit chain does not verify: ${JSON.stringify(chain)}`);
    }
    return f;
  };

  return {
    product: {
      label: 'product',
      async start() {
        await cluster.addNode();
        await cluster.addNode();
        await cluster.tenant();
        hosts = await cluster.users('host', settings.hosts, 'clinician');
        people = await cluster.users('m', settings.clients, 'patient', 8);
      },
      round: (i) => round('product', i, 'joinEvent'),
      stop: () => cluster.stop(),
    },
    baseline: {
      label: 'getMeetingDetails (same clients and nodes)',
      start: async () => undefined,
      round: (i) => round('baseline', i, 'getMeetingDetails'),
      stop: async () => undefined,
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b14',
  title: `Meeting joins under a burst: ${settings.clients.toLocaleString('en')} hub clients on 2 nodes join at once, then again in a closed loop: joins/s, p50/p99`,
  target: 'no failed join; the audit chain verifies',
  baselineName: 'getMeetingDetails (a meeting actor turn with no write), same clients, nodes and schedule',
  rounds: scaled(3, 1),
  settings,
  ratioFigure: 'burst_per_s',
  unavailable: () => firstReason(missingRoles('hub', 'actors'), missingModules('test/support/auth.ts')),
  sides: async (ctx) => sides(ctx),
  checks: (_p, _b, _r, rounds) => [
    check('failed joins (sum over rounds)', sum(rounds.product.map((r) => r.burst_failed! + r.loop_failed!)), 'max', 0),
    check('rounds whose audit chain did not verify', sum(rounds.product.map((r) => 1 - r.chain_ok!)), 'max', 0),
  ],
};
