/**
 * B11: a clinician's event list (GET /api/events/get, newest first, paged, with its total) over a
 * history of 10,000 events, through the whole product stack on the embedded default (mongo-java-server
 * H2, commit per write). Beside it on the same server and data: the bare query (the product's
 * EventRepository page and count behind a bare Express route) and the database's own rate for the same
 * queries with no HTTP. Pages go deep into the history (offsets up to 9,000) and some filter by name.
 */
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { productEnv, tenantHost } from './harness/env.js';
import { startProduct, stopProduct, missingModules, logFile, bareQuerySide } from './harness/sides.js';
import { runLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import type { HostProcess } from './harness/hosts.js';

const TENANT = 'bench';
const settings = {
  events: scaled(10_000, 500),
  conns: 8,
  durationMs: scaled(4000, 1500),
  warmupMs: scaled(1000, 500),
  dbRateMs: scaled(3000, 1000),
  take: 20,
};

function paths(): string[] {
  const names = ['', 'consultation 1', 'consultation 42'];
  const skips = [0, 20, 200, 2000, settings.events - 1000];
  return names.flatMap((n) =>
    skips.map(
      (s) => `/api/events/get?${n ? `name=${encodeURIComponent(n)}&` : ''}skip=${Math.max(0, s)}&take=${settings.take}`,
    ),
  );
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const mongoUri = ctx.mongoServers.embedded;
  const env = productEnv(ctx, 'b11', { ROLES: 'http', MONGODB_URI: mongoUri });
  let node: HostProcess | undefined;
  let token = '';
  let me = '';
  const load = async (url: string, headers: Record<string, string>, i: number, label: string): Promise<Figures> => {
    const r = await runLoad(
      'http-get',
      {
        url,
        paths: paths(),
        headers,
        conns: settings.conns,
        durationMs: settings.durationMs,
        warmupMs: settings.warmupMs,
        deadlineMs: settings.durationMs + settings.warmupMs + 90_000,
      },
      logFile(ctx, `b11-load-${label}-${i}`),
    );
    if (r.errors) ctx.log(`  ${label}: ${r.errors} errors, first: ${r.firstError}`);
    return { throughput_per_s: r.throughput_per_s, p50_ms: r.p50_ms, p99_ms: r.p99_ms, failed_requests: r.errors };
  };
  return {
    product: {
      label: 'product',
      async start() {
        node = await startProduct(ctx, 'b11', 'node', env);
        await node.call('tenant', { name: TENANT });
        const [clinician] = await node.call<{ token: string; id: string }[]>('users', {
          tenant: TENANT,
          prefix: 'clinician',
          count: 1,
          role: 'clinician',
        });
        token = clinician!.token;
        me = clinician!.id;
        await node.call('seedEvents', { tenant: TENANT, organizerId: me, count: settings.events });
      },
      round: (i) =>
        load(
          node!.info.url as string,
          { host: tenantHost(node!.info.url as string, TENANT), authorization: `Bearer ${token}` },
          i,
          'product',
        ),
      stop: () => stopProduct(ctx, [node], env),
    },
    baseline: bareQuerySide(ctx, 'b11', {
      mongoUri,
      env,
      tenant: TENANT,
      userId: () => me,
      paths: paths(),
      conns: settings.conns,
      dbRateMs: settings.dbRateMs,
      rateFigure: 'db_lists_per_s',
      load,
    }),
  };
}

export const benchmark: Benchmark = {
  id: 'b11',
  title: "A clinician's event list, 10,000 events, embedded default (H2, commit per write)",
  target: ">= 80% of the bare query's lists/s",
  baselineName: 'bare query (product repository query behind a bare route; db_lists_per_s: same queries, no HTTP)',
  rounds: scaled(3, 1),
  settings: { ...settings, server: 'embedded', paths: paths().length },
  ratioFigure: 'throughput_per_s',
  unavailable: () => missingModules('src/http/routes/events/events.router.ts', 'test/support/auth.ts'),
  sides: async (ctx) => sides(ctx),
  checks: (p, _b, ratio) => [
    check('lists/s ratio to the bare query', ratio, 'min', 0.8),
    check('failed requests', p.failed_requests, 'max', 0),
  ],
};
