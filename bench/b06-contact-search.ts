/**
 * B6: REST contact search (GET /api/contacts/get, paged) through the whole product stack (tenant
 * resolution, token verification, permission guard, validation, service, repository, presenter with
 * presence) against a bare Express route running the same MongoDB query on the same seeded database.
 */
import type { Benchmark, BenchContext, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { productEnv, tenantHost } from './harness/env.js';
import { startProduct, startBaseline, stopProduct, missingModules, logFile } from './harness/sides.js';
import { runLoad } from './harness/load.js';
import { scaled } from './harness/scale.js';
import type { HostProcess } from './harness/hosts.js';

const TENANT = 'bench';
const settings = {
  contacts: scaled(2000, 300),
  conns: 8,
  durationMs: scaled(6000, 1500),
  warmupMs: scaled(1500, 500),
  take: 20,
};

/** The mix of searches every side runs: name fragments and pages deep into the list. */
function paths(): string[] {
  const names = ['', 'a', 'contact0001', 'ben', 'na', 'contact00', 'eva'];
  const skips = [0, 20, 200, 1000];
  return names.flatMap((n) => skips.map((s) => `/api/contacts/get?name=${encodeURIComponent(n)}&skip=${s}&take=${settings.take}`));
}

function sides(ctx: BenchContext): { product: Side; baseline: Side } {
  const env = productEnv(ctx, 'b06', { ROLES: 'http' });
  let node: HostProcess | undefined;
  let base: HostProcess | undefined;
  let token = '';
  const load = (url: string, headers: Record<string, string>, i: number, label: string) => runLoad('http-get', {
    url, paths: paths(), headers, conns: settings.conns, durationMs: settings.durationMs, warmupMs: settings.warmupMs,
    deadlineMs: settings.durationMs + settings.warmupMs + 30_000,
  }, logFile(ctx, `b06-load-${label}-${i}`)).then((r) => {
    if (r.errors) ctx.log(`  ${label}: ${r.errors} errors, first: ${r.firstError}`);
    return { throughput_per_s: r.throughput_per_s, p50_ms: r.p50_ms, p99_ms: r.p99_ms, failed_requests: r.errors };
  });
  return {
    product: {
      label: 'product',
      async start() {
        node = await startProduct(ctx, 'b06', 'node', env);
        await node.call('tenant', { name: TENANT });
        const [me] = await node.call<{ token: string }[]>('users', { tenant: TENANT, prefix: 'searcher', count: 1, role: 'clinician' });
        token = me!.token;
        await node.call('seedContacts', { tenant: TENANT, count: settings.contacts });
      },
      round: (i) => load(node!.info.url, { host: tenantHost(node!.info.url, TENANT), authorization: `Bearer ${token}` }, i, 'product'),
      stop: () => stopProduct(ctx, [node], env),
    },
    baseline: {
      label: 'bare express',
      async start() {
        base = await startBaseline(ctx, 'b06', 'express-contacts.server.ts', { mongoUri: ctx.mongoUri, db: `${env.MONGODB_TENANT_DB_PREFIX}${TENANT}` });
      },
      round: (i) => load(base!.info.url, {}, i, 'baseline'),
      stop: async () => base?.stop(),
    },
  };
}

export const benchmark: Benchmark = {
  id: 'b06',
  title: 'REST contact search (paged): throughput and p99',
  target: '>= 60% of baseline throughput',
  baselineName: 'bare Express route, same MongoDB query',
  rounds: scaled(3, 1),
  settings,
  ratioFigure: 'throughput_per_s',
  unavailable: () => missingModules('src/http/routes/contacts/contacts.router.ts', 'test/support/auth.ts'),
  sides: async (ctx) => sides(ctx),
  checks: (p, _b, ratio) => [check('throughput ratio', ratio, 'min', 0.6), check('failed requests', p.failed_requests, 'max', 0)],
};
