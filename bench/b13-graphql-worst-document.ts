/**
 * B13: what the most expensive GraphQL document the cost budget accepts does to a node's event loop
 * (issue 13's target: /healthz keeps answering under 100 ms; decision 641). The product side sends the
 * worst accepted document (the private-server QR code plus contact pages of 100 while the budget allows,
 * built from the cost table as test/resilience/hostile/graphql-probe.test.ts builds it) over a tenant
 * of 100,000 contacts, one after the other, while an outside client polls /healthz; the baseline is the
 * same node shape and data sent the cheapest signed-in document (`{ me { id } }`). Each round reads the
 * node's longest event-loop block over its documents (bench/harness/loop-monitor.ts: wall clock, and
 * CPU-backed, the node's own computing) and the prober's longest answer. The test suite checks the
 * bound that keeps this small (the budget's rows and renders, decision 1050); the time is measured here.
 */
import { buildSchema, parse } from 'graphql';
import type { Benchmark, BenchContext, Figures, Side } from './harness/types.js';
import { check } from './harness/types.js';
import { productEnv, tenantHost } from './harness/env.js';
import { startProduct, stopProduct, missingModules } from './harness/sides.js';
import { scaled } from './harness/scale.js';
import type { HostProcess } from './harness/hosts.js';
import { request } from '../test/support/http.js';
import { SIGNED_IN_BUDGET, checkCost } from '../src/http/graphql/cost.js';
import { typeDefs } from '../src/http/graphql/schema.js';

const TENANT = 'bench';
const settings = {
  contacts: scaled(100_000, 3_000),
  documentsPerRound: scaled(5, 2),
  probeGapMs: 5,
};

const schema = buildSchema(typeDefs);
const costOf = (doc: string): number => {
  try {
    return checkCost(schema, parse(doc), undefined, undefined, true);
  } catch {
    return Infinity;
  }
};
const page = (i: number, round: number, take: number) =>
  `p${i}: myContacts(paging: { skip: ${((round * 10 + i) * 100) % settings.contacts}, take: ${take} }) { total items { id displayName username } }`;

/** The worst accepted document of round `round` (its pages start elsewhere in the list each round). */
export function worstDocument(round: number): string {
  const doc = (ts: number[]) =>
    `{ qr: generatePrivateServerConfigQrCode { dataUrl } ${ts.map((t, i) => page(i, round, t)).join(' ')} }`;
  const takes: number[] = [];
  while (takes.length < 50 && costOf(doc([...takes, 100])) <= SIGNED_IN_BUDGET) takes.push(100);
  let last = 99;
  while (last > 0 && costOf(doc([...takes, last])) > SIGNED_IN_BUDGET) last--;
  if (last > 0) takes.push(last);
  return doc(takes);
}

function side(ctx: BenchContext, label: string, document: (round: number) => string): Side {
  const env = productEnv(ctx, 'b13', { ROLES: 'http', MONGODB_URI: ctx.mongoServers.embedded });
  let node: HostProcess | undefined;
  let token = '';
  let url = '';
  let host = '';
  let told = false;
  // Through node:http: fetch does not send a Host header of its caller's, and the tenant is named by it.
  const post = async (query: string) => {
    const r = await request<{ errors?: unknown[] }>(url, 'POST', '/graphql', { host, token, body: { query } });
    const body = r.body;
    const ok = r.status === 200 && !body.errors;
    // The first refusal of a side is named in the log (a failed document is a verdict: say why).
    if (!ok && !told) {
      told = true;
      ctx.log(`b13 ${label}: a document failed: ${r.status} ${JSON.stringify(body).slice(0, 400)}`);
    }
    return ok;
  };
  return {
    label,
    async start() {
      node = await startProduct(ctx, 'b13', label === 'product' ? 'node' : 'baseline-node', env);
      url = node.info.url as string;
      host = tenantHost(url, TENANT);
      await node.call('tenant', { name: TENANT });
      const [admin] = await node.call<{ token: string }[]>('users', {
        tenant: TENANT,
        prefix: 'admin',
        count: 1,
        role: 'admin',
      });
      token = admin!.token;
      await node.call('seedContacts', { tenant: TENANT, count: settings.contacts });
      // Warm: the GraphQL pipeline's first compilation and the QR renderer's thread. The first search
      // starts the contact directory's load of the tenant in the background: its tail may fall into the
      // first round, which the median over the rounds leaves out.
      for (const q of ['{ me { id } }', worstDocument(0)]) await post(q);
      await node.call('loopWindow', {});
    },
    async round(i) {
      await node!.call('loopWindow', {});
      let running = true;
      const probes: number[] = [];
      let probeFailures = 0;
      const prober = (async () => {
        while (running) {
          const t0 = performance.now();
          const r = await fetch(`${url}/healthz`);
          await r.arrayBuffer();
          probes.push(performance.now() - t0);
          if (r.status !== 200) probeFailures++;
          await new Promise((res) => setTimeout(res, settings.probeGapMs));
        }
      })();
      let failed = 0;
      const t0 = performance.now();
      try {
        for (let d = 0; d < settings.documentsPerRound; d++) if (!(await post(document(i * 10 + d)))) failed++;
      } finally {
        running = false;
        await prober;
      }
      const seconds = (performance.now() - t0) / 1000;
      const loop = await node!.call<{ wallMaxMs: number; cpuMaxMs: number }>('loopWindow', {});
      return {
        loop_block_ms: loop.cpuMaxMs,
        loop_block_wall_ms: loop.wallMaxMs,
        healthz_max_ms: probes.length ? Math.max(...probes) : 0,
        healthz_probes: probes.length,
        healthz_failures: probeFailures,
        documents_per_s: settings.documentsPerRound / seconds,
        failed_documents: failed,
      } satisfies Figures;
    },
    stop: () => stopProduct(ctx, [node], env),
  };
}

export const benchmark: Benchmark = {
  id: 'b13',
  title: 'GraphQL: the worst document the cost budget accepts, against the event loop (100,000 contacts)',
  target: "the node's own longest event-loop block < 100 ms while the worst accepted document runs",
  baselineName: 'the same node and data sent the cheapest signed-in document ({ me { id } })',
  rounds: scaled(5, 1),
  settings: { ...settings, budget: SIGNED_IN_BUDGET, server: 'embedded' },
  ratioFigure: 'loop_block_ms',
  unavailable: () => missingModules('src/http/graphql/cost.ts', 'test/support/auth.ts'),
  sides: async (ctx) => ({
    product: side(ctx, 'product', worstDocument),
    baseline: side(ctx, 'baseline', () => '{ me { id } }'),
  }),
  checks: (p) => [
    check("node's own longest event-loop block (ms)", p.loop_block_ms, 'max', 100),
    check('failed documents', p.failed_documents, 'max', 0),
    check('/healthz failures', p.healthz_failures, 'max', 0),
  ],
};
