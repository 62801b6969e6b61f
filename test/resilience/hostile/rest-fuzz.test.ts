import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { startTestNode, type TestNode } from '../../support/node.js';
import { request } from '../../support/http.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { FUZZ_ENV, SOAK, RAW_BODIES, Tally, breach, fillPath, fuzz, nastyBody, nastyString, restOperations, runs, type RestOp } from './kit.js';

const TRAVERSALS = [
  '../../../../etc/passwd',
  '..%2f..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '%252e%252e%252f%252e%252e%252fetc%252fpasswd',
  '..\\..\\..\\etc\\passwd',
  '..%5c..%5cetc%5cpasswd',
  '%c0%ae%c0%ae%c0%af%c0%ae%c0%ae%c0%afetc%c0%afpasswd',
  '....//....//etc/passwd',
  '%00../../etc/passwd',
];

describe('hostile REST input: every endpoint of the permission table', () => {
  let node: TestNode;
  const tokens: Record<string, string> = {};
  const tally = new Tally();
  const ops = restOperations();

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http', ...FUZZ_ENV });
    await createUser(node, 'fuzza', { username: 'ada', role: 'admin' });
    await createUser(node, 'fuzza', { username: 'pat', role: 'patient' });
    tokens.admin = await tokenFor(node, 'fuzza', 'ada');
    tokens.patient = await tokenFor(node, 'fuzza', 'pat');
  });
  afterAll(async () => node?.destroy());

  const input = (op: RestOp) =>
    fc.record({
      params: fc.record(Object.fromEntries(op.params.map((p) => [p, nastyString]))),
      query: fc.dictionary(fc.oneof(fc.constantFrom('skip', 'take', 'name', 'code', 'eventId', 'userId', 'download', 'alphabet'), nastyString), nastyString, { maxKeys: 3 }),
      body: nastyBody(op.bodyKeys),
      who: fc.constantFrom('admin', 'admin', 'patient', 'none'),
    });

  async function send(op: RestOp, v: { params: Record<string, string>; query: Record<string, string>; body: unknown; who: string }) {
    const qs = new URLSearchParams(v.query).toString();
    const path = fillPath(op.template, v.params) + (qs ? `?${qs}` : '');
    const token = tokens[v.who];
    const r = await node.http[op.method](path, { tenant: 'fuzza', ...(token ? { token } : {}), ...(op.method === 'get' ? {} : { body: v.body }) });
    const problem = breach(r);
    tally.add(op.id, problem);
    return problem;
  }

  it('answers malformed, wrongly typed, boundary and oversized input with coded 4xx, never 5xx', async () => {
    const before = tally.breaches.length;
    for (const op of ops) {
      await fuzz(input(op), runs(5), (v) => send(op, v));
    }
    expect(tally.breaches.slice(before)).toEqual([]);
    expect(tally.perOp.size).toBe(ops.length);
  }, SOAK ? 1_800_000 : 180_000);

  it('refuses raw bodies that are not JSON, too deep or too big, on every endpoint that takes one', async () => {
    const before = tally.breaches.length;
    for (const op of ops.filter((o) => o.method !== 'get')) {
      const path = fillPath(op.template, Object.fromEntries(op.params.map((p) => [p, '0123456789abcdef01234567'])));
      for (const b of RAW_BODIES) {
        const r = await node.http[op.method](path, { tenant: 'fuzza', token: tokens.admin, rawBody: b.body, headers: { 'content-type': b.type } });
        tally.add(op.id, breach(r));
        if (r.status < 400 && ['truncated JSON', 'not JSON', 'huge JSON'].includes(b.name)) tally.breaches.push(`${op.id}: accepted ${b.name} with ${r.status}`);
      }
    }
    expect(tally.breaches.slice(before)).toEqual([]);
  });

  it('refuses path traversal in every path parameter (raw, encoded, double encoded, backslashes)', async () => {
    const before = tally.breaches.length;
    let probes = 0;
    for (const op of ops.filter((o) => o.params.length)) {
      for (const p of op.params) {
        for (const t of TRAVERSALS) {
          const values = Object.fromEntries(op.params.map((q) => [q, q === p ? t : 'fuzza']));
          const path = fillPath(op.template, values, true);
          const r = await request(node.url!, op.method.toUpperCase(), path, { tenant: 'fuzza', token: tokens.admin, rawPath: true });
          probes += 1;
          tally.add(op.id, breach(r));
          if (r.status < 400 || r.status >= 500) tally.breaches.push(`${op.id} ${p}=${t}: status ${r.status}`);
          if (/root:.*:0:0:/.test(r.text)) tally.breaches.push(`${op.id} ${p}=${t}: served /etc/passwd`);
        }
      }
    }
    expect(tally.breaches.slice(before)).toEqual([]);
    expect(probes).toBeGreaterThan(50);
  });

  it('still answers /healthz afterwards', async () => {
    expect((await node.http.get('/healthz')).status).toBe(200);
    node.infra.logger.info({ component: 'resilience', inputs: tally.total, endpoints: tally.perOp.size, breaches: tally.breaches.length }, 'REST fuzz figures');
    process.stdout.write(`REST fuzz: ${tally.total} inputs over ${tally.perOp.size} endpoints, ${tally.breaches.length} breaches\n`);
  });
});
