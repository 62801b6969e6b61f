import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildSchema, parse } from 'graphql';
import { createUser, tokenFor } from '../../support/auth.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv } from '../../support/env.js';
import { client } from '../../support/http.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { sortKeys } from '../../../src/data/models/user.model.js';
import { SIGNED_IN_BUDGET, checkCost } from '../../../src/http/graphql/cost.js';
import { typeDefs } from '../../../src/http/graphql/schema.js';

/**
 * While the most expensive GraphQL document the cost limits still accept runs, the node keeps
 * answering /healthz: its event loop is never blocked for 100 ms (decision 641). The node under test
 * is a separate process (the jest process's own loop cannot hide or add a block); an in-process node
 * of the same databases only seeds the tenant.
 */
describe('GraphQL: /healthz stays responsive while the worst accepted document runs', () => {
  const tenant = 'gqlprobe';
  const CONTACTS = 100_000;
  let seed: TestNode;
  let child: ChildNode;
  /** An idle node of the same code beside it: what the machine alone does to an event loop in the same windows. */
  let control: ChildNode;
  let token: string;

  beforeAll(async () => {
    const env = testEnv({ ROLES: 'http' });
    seed = await startTestNode(env);
    await createUser(seed, tenant, { username: 'ada', role: 'admin' });
    const { User } = seed.infra.mongo.tenantDb(tenant).models;
    const now = new Date();
    const keys = sortKeys as unknown as (displayName: string, username?: string) => Record<string, unknown>;
    for (let i = 0; i < CONTACTS; i += 1000) {
      const docs = Array.from({ length: Math.min(1000, CONTACTS - i) }, (_, j) => {
        const n = i + j;
        const displayName = `Contact ${String(n).padStart(5, '0')}`;
        return {
          username: `c${n}`,
          idpSubject: `c${n}`,
          displayName,
          role: 'patient',
          kind: 'person',
          status: 'active',
          createdAt: now,
          updatedAt: now,
          ...keys(displayName, `c${n}`),
        };
      });
      await User.collection.insertMany(docs, { ordered: false });
    }
    token = await tokenFor(seed, tenant, 'ada');
    [child, control] = await Promise.all([
      spawnChildNode({ ...env, LOOP_MONITOR: '1' }, 60_000),
      spawnChildNode({ ...env, LOOP_MONITOR: '1' }, 60_000),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([child?.stop(), control?.stop()]);
    await seed?.destroy();
  });

  /**
   * The most work the signed-in budget accepts: the QR render, then contact pages of 100 (each weighed by
   * its size) while they fit, then one more page as large as the rest of the budget allows.
   */
  const gqlSchema = buildSchema(typeDefs);
  /** The document's weighed cost, or Infinity when the node would refuse it as too complex. */
  const costOf = (doc: string) => {
    try {
      return checkCost(gqlSchema, parse(doc), undefined, undefined, true);
    } catch (e) {
      if ((e as { extensions?: { code?: string } }).extensions?.code === 'query_too_complex') return Infinity;
      throw e;
    }
  };
  const page = (i: number, round: number, take: number) =>
    `p${i}: myContacts(paging: { skip: ${((round * 10 + i) * 100) % CONTACTS}, take: ${take} }) { total items { id displayName username } }`;
  const worst = (round: number): { doc: string; takes: number[] } => {
    const takes: number[] = [];
    const doc = (ts: number[]) =>
      `{ qr: generatePrivateServerConfigQrCode { dataUrl } ${ts.map((t, i) => page(i, round, t)).join(' ')} }`;
    while (costOf(doc([...takes, 100])) <= SIGNED_IN_BUDGET) takes.push(100);
    let last = 99;
    while (last > 0 && costOf(doc([...takes, last])) > SIGNED_IN_BUDGET) last--;
    if (last > 0) takes.push(last);
    return { doc: doc(takes), takes };
  };

  const post = (query: string) => client(child.url).post('/graphql', { tenant, token, body: { query } });
  /** A node's longest event-loop block since the previous call, wall clock and CPU-backed (test/support/loop-monitor.ts). */
  const loopMax = async (n: ChildNode) => {
    const line = n.nextLog((r) => r.msg === 'event loop');
    n.proc.kill('SIGUSR2');
    const r = await line;
    return { wall: Number(r.maxMs), cpu: Number(r.cpuMaxMs) };
  };
  /** One window closed on both nodes at once: the node's longest block, and the idle control's. */
  const window = async () => {
    const [busy, idle] = await Promise.all([loopMax(child), loopMax(control)]);
    return { busy: busy.cpu, wall: busy.wall, idle: idle.cpu, idleWall: idle.wall };
  };

  it('is the worst document the budget accepts, and the node never blocks its loop for 100 ms while it runs', async () => {
    const cost = costOf(worst(0).doc);
    expect(cost).toBeLessThanOrEqual(SIGNED_IN_BUDGET);
    expect(cost).toBeGreaterThan(SIGNED_IN_BUDGET * 0.98);
    const { takes } = worst(0);

    // The GraphQL pipeline's first run (compiling its code paths) is not what is measured; the contact
    // directory's first load of the tenant's 50,000 users is: it runs inside the first document.
    for (const q of ['{ me { id } }', '{ qr: generatePrivateServerConfigQrCode { dataUrl } }'])
      expect((await post(q)).status).toBe(200);
    await window(); // starts the first window: what follows is measured
    // The first search starts the directory's load in the background (the database answers meanwhile);
    // its end is awaited and measured too, whenever it comes.
    const loaded = child.nextLog((r) => r.msg === 'contact directory loaded' && r.tenant === tenant, 60_000);
    let running = true;
    const probes: { ms: number; status: number; duringDocument: boolean }[] = [];
    let inFlight = 0;
    const prober = (async () => {
      while (running) {
        const t0 = performance.now();
        const during = inFlight > 0;
        const r = await fetch(`${child.url}/healthz`);
        await r.arrayBuffer();
        probes.push({ ms: performance.now() - t0, status: r.status, duringDocument: during && inFlight > 0 });
        await new Promise((res) => setTimeout(res, 5));
      }
    })();
    const answers: { status: number; errors: unknown; items: number[] }[] = [];
    const blocked: { busy: number; wall: number; idle: number; idleWall: number }[] = [];
    try {
      for (let round = 0; round < 5; round++) {
        inFlight++;
        const r = await post(worst(round).doc).finally(() => inFlight--);
        blocked.push(await window());
        const data = (r.body?.data ?? {}) as Record<string, { items?: unknown[] }>;
        answers.push({
          status: r.status,
          errors: r.body?.errors ?? null,
          items: takes.map((_, i) => data[`p${i}`]?.items?.length ?? 0),
        });
      }
      await loaded;
      blocked.push(await window());
    } finally {
      running = false;
      await prober;
    }

    expect(answers).toEqual(Array.from({ length: 5 }, () => ({ status: 200, errors: null, items: takes })));
    // The probe ran beside the documents: answers arrived while a document was being served.
    const during = probes.filter((p) => p.duringDocument);
    expect(during.length).toBeGreaterThanOrEqual(5);
    expect(probes.every((p) => p.status === 200)).toBe(true);
    // eslint-disable-next-line no-console
    console.log(
      `graphql probe: document cost ${cost} (pages ${takes.join(', ')}), longest event-loop block per document, CPU-backed ${blocked.map((b) => `${b.busy.toFixed(0)} (idle control ${b.idle.toFixed(0)})`).join(', ')} ms, wall clock ${blocked.map((b) => `${b.wall.toFixed(0)} (${b.idleWall.toFixed(0)})`).join(', ')} ms; /healthz during documents: ${during.length} probes, max ${Math.max(...during.map((p) => p.ms)).toFixed(1)} ms`,
    );
    expect(blocked).toHaveLength(6);
    // What the document did to the loop: the node's longest block of its own computing (waiting for a core
    // on a shared machine is not the document's doing; the idle control shows what the machine adds).
    expect(Math.max(...blocked.map((b) => b.busy))).toBeLessThan(100);
  }, 120_000);
});
