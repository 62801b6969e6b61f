/**
 * B12: a reconnect storm (issue 35, decision 1085). `connections` authenticated hub clients (one user
 * each, the SDK's HubClient) spread round-robin over three product nodes (separate processes), each a
 * member of a meeting of `meetingSize`; each meeting's host, on a surviving node, sends it a notify every
 * `pushEveryMs` and reads go to random members. One node is SIGKILLed: its clients reconnect by
 * themselves (socket.io's default backoff) to the other nodes, handing over their last push positions,
 * and join their meetings again. Per round, from the kill: the time until every one of them is connected
 * again, until pushes flow to it again and it has every push acknowledged before it came back (the
 * replay: "resumed", the target), and until it is also in its meeting again ("rejoined"); acknowledged
 * pushes some member never received; p50/p99 of the hub calls started during the storm. The baseline is
 * the same storm with bare socket.io-client clients against three bare Socket.IO servers on the sharded
 * Redis adapter.
 */
import { availableParallelism } from 'node:os';
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { startBaseline, missingModules, missingRoles, firstReason, logFile } from './harness/sides.js';
import { spawnLoad, type LoadProcess } from './harness/load.js';
import { scaled } from './harness/scale.js';
import { HubCluster, HUB_PATH, type BenchUser } from './harness/hub-cluster.js';
import type { HostProcess } from './harness/hosts.js';
import { percentile, round3 } from './harness/stats.js';
import { CpuTimeline } from './harness/proc-cpu.js';
import { listenerPid } from '../scripts/ports.mjs';

/** `BENCH_B12_CONNECTIONS=500 npm run bench -- b12`: the storm at another size (partial.*). */
function connections(): number {
  const given = Number(process.env.BENCH_B12_CONNECTIONS);
  return Number.isInteger(given) && given > 0 ? given : scaled(10_000, 300);
}

const settings = {
  connections: connections(),
  nodes: 3,
  clientProcesses: scaled(4, 1),
  meetingSize: 10,
  // Background traffic that gives each client pushes to miss: a notify per meeting (10 members) every
  // 10 s is 1,000 recorded pushes/s at 10,000 clients, as much as the storm itself (decision 1085).
  // (`BENCH_B12_PUSH_EVERY_MS` for another rate: the background's cost follows it.)
  pushEveryMs: Number(process.env.BENCH_B12_PUSH_EVERY_MS) > 0 ? Number(process.env.BENCH_B12_PUSH_EVERY_MS) : 10_000,
  probesPerS: scaled(100, 20),
  // The calm between the background's start and the kill (`BENCH_B12_CALM_MS` for a longer look at it).
  warmupMs: Number(process.env.BENCH_B12_CALM_MS) > 0 ? Number(process.env.BENCH_B12_CALM_MS) : 4000,
  tailMs: 2000,
  stormMaxMs: 60_000,
  settleMs: 30_000,
  // Set-up only (not measured): connections and joins in flight per client process before the storm.
  parallelHandshakesPerProcess: 10,
  // The runtime default (src/config): the victim's meeting actors move after one lease, as deployed.
  actorLeaseMs: 3000,
  // The history window and size are the defaults (HUB_PUSH_HISTORY_MS 2 min, HUB_PUSH_HISTORY_MAX 500).
  nofile: 19_000,
};

/** What a load process reports (bench/load/storm.ts). */
interface StormResult {
  clients: number;
  victims: number;
  notResumed: number;
  notRejoined: number;
  earlyDisconnects: number;
  reconnectedMs: number[];
  resumedMs: number[];
  rejoinedMs: number[];
  stormMs: number;
  pushesSent: number;
  unclosed: number;
  pushesExpected: number;
  pushesMissed: number;
  pushesWhileAway: number;
  pushesRecovered: number;
  duplicates: number;
  resyncs: number;
  stormCallsMs: number[];
  stormCallsElsewhereMs: number[];
  calmCallsMs: number[];
  failedCalls: number;
  /** Why calls started during the storm failed (message -> count, the five most frequent). */
  failures: Record<string, number>;
}

/** One process's share of the run: its clients, its meetings (local group numbers) and its host. */
interface Slice {
  firstIndex: number;
  clients: { cred: string; group: number }[];
  groups: { id: string; failover: boolean }[];
  host: { cred: string; node: number };
}

/** Splits clients 0..n-1 into contiguous slices of whole meetings, one per process. */
function slices(n: number): { from: number; to: number }[] {
  const meetings = Math.ceil(n / settings.meetingSize);
  const per = Math.ceil(meetings / settings.clientProcesses);
  const out: { from: number; to: number }[] = [];
  for (let k = 0; k < settings.clientProcesses; k++) {
    const from = Math.min(n, k * per * settings.meetingSize);
    const to = Math.min(n, (k + 1) * per * settings.meetingSize);
    if (to > from) out.push({ from, to });
  }
  return out;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const max = (xs: number[]) => (xs.length ? xs.reduce((a, b) => Math.max(a, b), -Infinity) : Number.NaN);

/** The time by which all `of` clients got there: the latest of their times, or none if some never did. */
const every = (times: number[], of: number) => (times.length === of ? round3(max(times)) : Number.NaN);

/** The round's figures from every process's result. */
function figures(rs: StormResult[], product: boolean): Figures {
  type Samples =
    'reconnectedMs' | 'resumedMs' | 'rejoinedMs' | 'stormCallsMs' | 'stormCallsElsewhereMs' | 'calmCallsMs';
  const all = (k: Samples) => rs.flatMap((r) => r[k]);
  const storm = all('stormCallsMs');
  const f: Figures = {
    clients: sum(rs.map((r) => r.clients)),
    victims: sum(rs.map((r) => r.victims)),
    // "Every client": none when one of them never got there within the storm's limit (the counts say how many).
    all_reconnected_ms: every(all('reconnectedMs'), sum(rs.map((r) => r.victims))),
    all_resumed_ms: every(all('resumedMs'), sum(rs.map((r) => r.victims))),
    resumed_p50_ms: round3(percentile(all('resumedMs'), 50)),
    all_rejoined_ms: every(all('rejoinedMs'), sum(rs.map((r) => r.victims))),
    not_resumed: sum(rs.map((r) => r.notResumed)),
    not_rejoined: sum(rs.map((r) => r.notRejoined)),
    pushes_expected: sum(rs.map((r) => r.pushesExpected)),
    pushes_missed: sum(rs.map((r) => r.pushesMissed)),
    pushes_while_away: sum(rs.map((r) => r.pushesWhileAway)),
    pushes_recovered: sum(rs.map((r) => r.pushesRecovered)),
    duplicates: sum(rs.map((r) => r.duplicates)),
    // Members still without their meeting's closing push after settleMs (their missing pushes are counted).
    unsettled_members: sum(rs.map((r) => r.unclosed)),
    calls_during_storm: storm.length,
    call_p50_ms: round3(percentile(storm, 50)),
    call_p99_ms: round3(percentile(storm, 99)),
    call_max_ms: round3(percentile(storm, 100)),
    failed_calls: sum(rs.map((r) => r.failedCalls)),
    calm_call_p99_ms: round3(percentile(all('calmCallsMs'), 99)),
  };
  if (product) {
    f.resyncs = sum(rs.map((r) => r.resyncs));
    // Calls to meetings whose actor was not on the killed node: the storm without the actors' failover.
    f.call_p99_elsewhere_ms = round3(percentile(all('stormCallsElsewhereMs'), 99));
  }
  return f;
}

/**
 * The machine's CPU in the storm's measured window (from the kill until the last victim resumed), per
 * victim, by process group: the surviving servers, the database server, Redis, the load processes. On a
 * machine whose cores the storm keeps busy, the window's length follows their sum, which moves less
 * between runs than the wall clock (the machine's other load, the scheduling of two vCPUs).
 */
function stormCpu(timeline: CpuTimeline, at: number, f: Figures): Figures {
  const resumed = Number(f.all_resumed_ms);
  const victims = Number(f.victims);
  if (!Number.isFinite(resumed) || !victims) return {};
  const cpu = timeline.between(at, at + resumed);
  const perVictim = (s: number) => round3((s * 1000) / victims);
  const total = Object.values(cpu).reduce((a, b) => a + b, 0) - cpu.victim!;
  return {
    storm_cpu_survivors_ms_per_victim: perVictim(cpu.survivors!),
    storm_cpu_db_ms_per_victim: perVictim(cpu.db!),
    storm_cpu_redis_ms_per_victim: perVictim(cpu.redis!),
    storm_cpu_load_ms_per_victim: perVictim(cpu.load!),
    // Of the machine's cores over the window: how busy the storm kept it.
    storm_cpu_busy_share: round3(total / ((resumed / 1000) * availableParallelism())),
  };
}

/** The calm's first second is left out of its window: the pushes and reads have just begun. */
const CALM_SKIP_MS = 1000;

/**
 * The background's CPU before the kill (the calm: every node up, the notifies and reads running), in
 * cores used by each process group. In the storm the same background runs on the surviving nodes, so the
 * victims get what the cores have beyond it: the storm's length is about the victims' CPU divided by that
 * room.
 */
function calmCpu(timeline: CpuTimeline, from: number, to: number): Figures {
  if (to - from < 500) return {};
  const cpu = timeline.between(from, to);
  const cores = (s: number) => round3(s / ((to - from) / 1000));
  return {
    calm_cpu_servers_cores: cores(cpu.survivors! + cpu.victim!),
    calm_cpu_db_cores: cores(cpu.db!),
    calm_cpu_redis_cores: cores(cpu.redis!),
    calm_cpu_load_cores: cores(cpu.load!),
  };
}

/** Runs one storm: the processes connect, pushes start, the victim is killed, the results are merged. */
async function storm(
  ctx: BenchContext,
  label: string,
  i: number,
  base: { mode: 'product' | 'bare'; targets: { url: string; host?: string }[]; path: string; victim: number },
  parts: Slice[],
  kill: () => Promise<number>,
  /** The processes whose CPU the storm's window is read for: the surviving servers, and the database's when one serves them. */
  pids: { survivors: number[]; victim: number; db?: number },
): Promise<Figures> {
  const loads: LoadProcess<StormResult>[] = parts.map((s, k) =>
    spawnLoad<StormResult>(
      'storm',
      {
        ...base,
        ...s,
        parallel: settings.parallelHandshakesPerProcess,
        pushEveryMs: settings.pushEveryMs,
        probesPerS: settings.probesPerS / parts.length,
        tailMs: settings.tailMs,
        stormMaxMs: settings.stormMaxMs,
        settleMs: settings.settleMs,
        deadlineMs: 900_000,
      },
      { logFile: logFile(ctx, `b12-load-${label}-${i}-${k}`), nofile: settings.nofile },
    ),
  );
  try {
    const ready = await Promise.all(
      loads.map((l) =>
        Promise.race([
          l.when('ready'),
          l.result.then(() => {
            throw new Error('load finished before ready');
          }),
        ]),
      ),
    );
    const slowest = (k: 'connectMs' | 'joinMs') => Math.max(...ready.map((r: Record<string, number>) => r[k]!));
    ctx.log(
      `  ${label} round ${i + 1}: clients connected in ${slowest('connectMs')} ms, in their meetings ${slowest('joinMs')} ms later`,
    );
    for (const l of loads) l.send({ type: 'start' });
    const timeline = new CpuTimeline({
      survivors: pids.survivors,
      victim: [pids.victim],
      db: [pids.db],
      redis: [listenerPid(Number(new URL(ctx.redisUrl).port))],
      load: loads.map((l) => l.pid),
    });
    const calmFrom = Date.now() + CALM_SKIP_MS;
    await new Promise((r) => setTimeout(r, settings.warmupMs));
    const at = await kill();
    for (const l of loads) l.send({ type: 'killed', at });
    const rs = await Promise.all(loads.map((l) => l.result)).finally(() => timeline.stop());
    const early = sum(rs.map((r) => r.earlyDisconnects));
    if (early) throw new Error(`${early} client(s) of the surviving nodes disconnected before the kill`);
    const failures = new Map<string, number>();
    for (const r of rs) for (const [k, v] of Object.entries(r.failures)) failures.set(k, (failures.get(k) ?? 0) + v);
    if (failures.size)
      ctx.log(`  ${label} round ${i + 1}: failed calls: ${[...failures].map(([k, v]) => `${v} x ${k}`).join('; ')}`);
    const f = figures(rs, base.mode === 'product');
    return { ...f, ...calmCpu(timeline, calmFrom, at), ...stormCpu(timeline, at, f) };
  } finally {
    for (const l of loads) l.kill();
  }
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const n = settings.connections;
  const cuts = slices(n);
  const cluster = HubCluster.create(ctx, 'b12', { ACTOR_LEASE_MS: String(settings.actorLeaseMs) });
  let hosts: BenchUser[] = [];
  let people: BenchUser[] = [];
  const groupOf = (index: number, from: number) => Math.floor((index - from) / settings.meetingSize);
  const survivors = settings.nodes - 1;

  const productRound = async (i: number): Promise<Figures> => {
    // A fresh victim each round beside the surviving nodes; both see it before meetings are placed.
    const victim = await cluster.addNode({ nofile: settings.nofile });
    await new Promise((r) => setTimeout(r, settings.actorLeaseMs));
    const live = cluster.liveIds();
    const parts: Slice[] = [];
    for (const [k, { from, to }] of cuts.entries()) {
      const members: string[][] = [];
      for (let x = from; x < to; x++) (members[groupOf(x, from)] ??= []).push(people[x]!.id);
      // New meetings every round: each round's rosters start empty.
      const ids = await cluster.meetings(
        members.map(() => hosts[k]!.id),
        members,
      );
      parts.push({
        firstIndex: from,
        clients: people.slice(from, to).map((u, x) => ({ cred: u.token, group: groupOf(from + x, from) })),
        groups: ids.map((id) => ({ id, failover: cluster.meetingOwner(id, live) === cluster.nodeIds[victim] })),
        host: { cred: hosts[k]!.token, node: k % survivors },
      });
    }
    // The clients' list of nodes: the survivors (nodes 0 and 1) and this round's victim, last.
    const targets = [...Array(survivors).keys(), victim].map((x) => cluster.target(x));
    return storm(
      ctx,
      'product',
      i,
      { mode: 'product', targets, path: HUB_PATH, victim: survivors },
      parts,
      async () => {
        const at = Date.now();
        await cluster.node(victim).signal('SIGKILL');
        cluster.dropped(victim);
        return at;
      },
      {
        survivors: [...Array(survivors).keys()].map((x) => cluster.node(x).pid),
        victim: cluster.node(victim).pid,
        db: listenerPid(Number(new URL(ctx.mongoUri).port)),
      },
    );
  };

  const baselineRound = async (i: number): Promise<Figures> => {
    const servers: HostProcess[] = [];
    const key = `${cluster.env.REDIS_PREFIX}b12-bare-${i}`;
    try {
      for (let x = 0; x < settings.nodes; x++)
        servers.push(
          await startBaseline(
            ctx,
            'b12',
            'adapter-broadcast.server.ts',
            { redisUrl: ctx.redisUrl, key, sharded: true },
            { nofile: settings.nofile },
          ),
        );
      const parts: Slice[] = cuts.map(({ from, to }, k) => ({
        firstIndex: from,
        clients: Array.from({ length: to - from }, (_, x) => ({
          cred: `u${from + x}`,
          group: groupOf(from + x, from),
        })),
        groups: Array.from({ length: Math.ceil((to - from) / settings.meetingSize) }, (_, g) => ({
          id: `r${i}-${k}-${g}`,
          failover: false,
        })),
        host: { cred: `host${k}`, node: k % survivors },
      }));
      const victim = settings.nodes - 1;
      return await storm(
        ctx,
        'baseline',
        i,
        { mode: 'bare', targets: servers.map((s) => ({ url: s.info.url })), path: '/socket.io', victim },
        parts,
        async () => {
          const at = Date.now();
          await servers[victim]!.signal('SIGKILL');
          return at;
        },
        { survivors: servers.slice(0, victim).map((s) => s.pid), victim: servers[victim]!.pid },
      );
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  };

  return {
    product: {
      label: 'product',
      async start() {
        for (let x = 0; x < survivors; x++) await cluster.addNode({ nofile: settings.nofile });
        await cluster.tenant();
        const t0 = Date.now();
        hosts = await cluster.users('host', cuts.length, 'clinician');
        people = await cluster.users('m', n, 'patient', 8);
        ctx.log(`  ${n} users signed in in ${Math.round((Date.now() - t0) / 1000)} s`);
      },
      round: productRound,
      stop: () => cluster.stop(),
    },
    baseline: {
      label: 'bare socket.io',
      start: async () => undefined,
      round: baselineRound,
      stop: async () => undefined,
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b12',
  title: `Reconnect storm: ${settings.connections.toLocaleString('en')} hub connections on 3 nodes, one SIGKILLed: time to every client back and resumed, pushes missed, call p99`,
  target: 'every client reconnected and resumed <= 10 s after the kill; 0 pushes missed',
  baselineName: 'bare socket.io-client and 3 bare Socket.IO servers on the sharded Redis adapter, same storm',
  rounds: scaled(3, 1),
  settings,
  ratioFigure: 'all_resumed_ms',
  unavailable: () =>
    firstReason(
      missingRoles('hub', 'actors'),
      missingModules('test/support/auth.ts', 'src/hub/hub.resume.ts', 'packages/client/src/push-streams.ts'),
    ),
  sides: async (ctx) => sides(ctx),
  checks: (_p, _b, _r, rounds) => [
    // Every client of every storm: the worst round, not the median one.
    check(
      'time to every client reconnected and resumed, worst round (ms)',
      max(rounds.product.map((r) => r.all_resumed_ms!)),
      'max',
      10_000,
    ),
    check('pushes missed (sum over rounds)', sum(rounds.product.map((r) => r.pushes_missed!)), 'max', 0),
    check('clients not resumed (sum over rounds)', sum(rounds.product.map((r) => r.not_resumed!)), 'max', 0),
    check(
      'clients not in their meeting again (sum over rounds)',
      sum(rounds.product.map((r) => r.not_rejoined!)),
      'max',
      0,
    ),
  ],
};
