/**
 * B6: REST contact search (GET /api/contacts/get, paged, with its total) through the whole product
 * stack, at hospital sizes (2k, 20k and 100k users by default) on the embedded default of `npm start`
 * (mongo-java-server H2, commit per write) and on the test server (mongo-java-server in memory). Beside
 * it, on the same server and data: the bare query (the product's repository query, page and capped
 * count, behind a bare Express route: the product's overhead) and the database's own rate for the same
 * queries with no HTTP. The product side also measures username lookups and updates by _id through
 * the product's UserRepository. One variant per size and server; BENCH_B06_SIZES and BENCH_B06_SERVERS
 * choose them (the committed run's are in latest.json settings).
 */
import type { Benchmark, BenchContext, Check, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { productEnv, tenantHost } from './harness/env.js';
import { startProduct, stopProduct, missingModules, logFile, bareQuerySide } from './harness/sides.js';
import { runLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import type { HostProcess } from './harness/hosts.js';

const TENANT = 'bench';
const common = {
  conns: 8,
  durationMs: scaled(4000, 1500),
  warmupMs: scaled(1000, 500),
  dbRateMs: scaled(3000, 1000),
  pointMs: scaled(1500, 500),
  take: 20,
};

/** The mix of searches every side runs: name prefixes (accented and not) and pages deep into the list. */
function paths(): string[] {
  const names = ['', 'a', 'ben', 'contact0001', 'zoe', 'jose', 'contact00', 'eva'];
  const skips = [0, 20, 200, 1000];
  return names.flatMap((n) =>
    skips.map((s) => `/api/contacts/get?name=${encodeURIComponent(n)}&skip=${s}&take=${common.take}`),
  );
}

type ServerRole = 'embedded' | 'test';
const SERVER_LABEL: Record<ServerRole, string> = {
  embedded: 'embedded default (H2, commit per write)',
  test: 'test server (memory)',
};

function sizes(): number[] {
  const raw = process.env.BENCH_B06_SIZES ?? scaled('2000,20000,100000', '300');
  return raw
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

function servers(): ServerRole[] {
  return (process.env.BENCH_B06_SERVERS ?? 'embedded,test')
    .split(',')
    .map((s) => s.trim())
    .filter((s): s is ServerRole => s === 'embedded' || s === 'test');
}

const short = (n: number) => (n % 1000 === 0 ? `${n / 1000}k` : String(n));

/**
 * From this size on the bare query is not run: it scans the collection for every search (10 s a search on
 * the test server at 1,000,000 users, beyond the load's deadline on H2), and its scans exhausted the
 * database server's 6 GB heap. The product's figures carry absolute targets there.
 */
const BARE_QUERY_BELOW = 1_000_000;

function sides(ctx: BenchContext, role: ServerRole, contacts: number, id: string): { product: Side; baseline?: Side } {
  const mongoUri = ctx.mongoServers[role];
  const env = productEnv(ctx, 'b06', { ROLES: 'http', MONGODB_URI: mongoUri });
  let node: HostProcess | undefined;
  let token = '';
  let me = '';
  /** What the restarted node showed (the same in every round's figures): start, readiness, directory. */
  let start: Figures = {};
  const load = async (url: string, headers: Record<string, string>, i: number, label: string): Promise<Figures> => {
    const r = await runLoad(
      'http-get',
      {
        url,
        paths: paths(),
        headers,
        conns: common.conns,
        durationMs: common.durationMs,
        warmupMs: common.warmupMs,
        deadlineMs: common.durationMs + common.warmupMs + 90_000,
      },
      logFile(ctx, `${id}-load-${label}-${i}`),
    );
    if (r.errors) ctx.log(`  ${label}: ${r.errors} errors, first: ${r.firstError}`);
    return { throughput_per_s: r.throughput_per_s, p50_ms: r.p50_ms, p99_ms: r.p99_ms, failed_requests: r.errors };
  };
  const measure = async (i: number, label: string): Promise<Figures> => {
    const http = await load(
      node!.info.url as string,
      { host: tenantHost(node!.info.url as string, TENANT), authorization: `Bearer ${token}` },
      i,
      label,
    );
    const point = await node!.call<{ username_lookups_per_s: number; updates_by_id_per_s: number }>('pointRates', {
      tenant: TENANT,
      count: contacts,
      concurrency: common.conns,
      durationMs: common.pointMs,
    });
    return { ...http, ...point, ...start };
  };
  return {
    product: {
      label: 'product',
      async start() {
        node = await startProduct(ctx, id, 'node', env);
        await node.call('tenant', { name: TENANT });
        const [searcher] = await node.call<{ token: string; id: string }[]>('users', {
          tenant: TENANT,
          prefix: 'searcher',
          count: 1,
          role: 'clinician',
        });
        token = searcher!.token;
        me = searcher!.id;
        const empty = await node.mem();
        const seeded = await node.call<{ seconds: number }>('seedContacts', { tenant: TENANT, count: contacts });
        ctx.log(
          `  seeded ${contacts} contacts in ${seeded.seconds.toFixed(1)} s (${Math.round(contacts / seeded.seconds)}/s)`,
        );
        // A node started on the seeded tenant, as an operator's is (decision 1139): it is ready once it
        // holds the tenant's directory; its searches are measured on it.
        await node.stop();
        node = undefined;
        const t0 = performance.now();
        node = await startProduct(ctx, id, 'node-restarted', env);
        const listening = performance.now() - t0;
        const ready = await untilReady(node.info.url as string);
        const held = await node.mem();
        start = {
          start_listening_s: listening / 1000,
          start_ready_s: (performance.now() - t0) / 1000,
          directory_load_s: ready.directoryMs / 1000,
          // Meaningful only where the directory outweighs the heap's own noise (a few MB).
          ...(contacts >= 100_000 && { directory_heap_bytes_per_user: (held.heapUsed - empty.heapUsed) / contacts }),
          node_rss_after_load_mib: held.rss / 2 ** 20,
        };
        ctx.log(
          `  restarted: listening in ${start.start_listening_s!.toFixed(1)} s, ready in ${start.start_ready_s!.toFixed(1)} s (directory ${start.directory_load_s!.toFixed(1)} s), ${Math.round(start.directory_heap_bytes_per_user ?? NaN)} heap bytes per user`,
        );
        // One round on the restarted node before the measured ones, not counted: its first round after the
        // start read lower than the next two in every run (JITs and the database server's caches cold).
        const warm = await measure(0, 'product-warmup');
        ctx.log(
          `  warm-up round (not measured): ${warm.throughput_per_s!.toFixed(0)} searches/s, p99 ${warm.p99_ms!.toFixed(1)} ms`,
        );
      },
      round: (i) => measure(i, 'product'),
      stop: () => stopProduct(ctx, [node], env),
    },
    baseline:
      contacts >= BARE_QUERY_BELOW
        ? undefined
        : bareQuerySide(ctx, id, {
            mongoUri,
            env,
            tenant: TENANT,
            userId: () => me,
            paths: paths(),
            conns: common.conns,
            dbRateMs: common.dbRateMs,
            rateFigure: 'db_searches_per_s',
            load,
            warmUp: true,
          }),
  };
}

/**
 * Polls /readyz until it answers 200 (every 100 ms; the node's own readiness, decision 1139), and
 * returns how long the directory took to load as the node reports it.
 */
async function untilReady(url: string, timeoutMs = 600_000): Promise<{ directoryMs: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await fetch(`${url}/readyz`);
    const body = (await r.json()) as { checks?: { directory?: { ms: number } } };
    if (r.status === 200) return { directoryMs: body.checks?.directory?.ms ?? 0 };
    if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function variant(role: ServerRole, contacts: number): Benchmark {
  const id = `b06-${role}-${short(contacts)}`;
  const bare = contacts < BARE_QUERY_BELOW;
  const targets: string[] = bare ? [">= 80% of the bare query's searches/s"] : [];
  if (contacts >= 1_000_000) targets.push('p99 <= 50 ms and >= 200 searches/s at 8 clients');
  else if (role === 'embedded' && contacts >= 100_000) targets.push('p99 <= 100 ms and >= 200 searches/s at 8 clients');
  if (role === 'embedded' && contacts >= 20_000 && contacts < 100_000) targets.push('p99 <= 50 ms');
  if (contacts >= 100_000) targets.push('username lookups and updates by _id >= 1,000/s each');
  return {
    id,
    title: `Contact search, ${contacts.toLocaleString('en')} users, ${SERVER_LABEL[role]}`,
    target: targets.join('; '),
    baselineName: bare
      ? 'bare query (product repository query behind a bare route; db_searches_per_s: same queries, no HTTP)'
      : '- (the bare query scans: not run at this size)',
    rounds: scaled(3, 1),
    settings: { ...common, contacts, server: role, paths: paths().length },
    ...(bare && { ratioFigure: 'throughput_per_s' }),
    unavailable: () => missingModules('src/http/routes/contacts/contacts.router.ts', 'test/support/auth.ts'),
    sides: async (ctx) => sides(ctx, role, contacts, id),
    checks: (p, _b, ratio) => {
      const out: Check[] = [
        ...(bare ? [check('searches/s ratio to the bare query', ratio, 'min', 0.8)] : []),
        check('failed requests', p.failed_requests, 'max', 0),
      ];
      if (contacts >= 1_000_000)
        out.push(check('p99 ms', p.p99_ms, 'max', 50), check('searches/s', p.throughput_per_s, 'min', 200));
      else if (role === 'embedded' && contacts >= 100_000)
        out.push(check('p99 ms', p.p99_ms, 'max', 100), check('searches/s', p.throughput_per_s, 'min', 200));
      if (role === 'embedded' && contacts >= 20_000 && contacts < 100_000)
        out.push(check('p99 ms', p.p99_ms, 'max', 50));
      if (contacts >= 100_000)
        out.push(
          check('username lookups/s', p.username_lookups_per_s, 'min', 1000),
          check('updates by _id/s', p.updates_by_id_per_s, 'min', 1000),
        );
      return out;
    },
  };
}

export const benchmarks: Benchmark[] = servers().flatMap((role) => sizes().map((n) => variant(role, n)));
