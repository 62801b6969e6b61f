import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { startTestNode, type TestNode } from '../../support/node.js';
import { request } from '../../support/http.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { OPERATIONS } from '../../../src/operations/operation-table.js';
import { TENANT_MODEL_NAMES } from '../../../src/data/tenant-models.js';
import { tenantState } from '../../support/tenant-state.js';
import { SaveNoticeCommand } from '../../../src/core/directory/notice.service.js';
import { CreateGroupCommand } from '../../../src/core/directory/contact.schema.js';
import { CreateEventCommand } from '../../../src/core/meetings/event.schema.js';
import {
  FUZZ_ENV,
  FUZZ_ONLY,
  FUZZ_PER_TARGET,
  selected,
  SOAK,
  RAW_BODIES,
  Tally,
  batches,
  breach,
  fillPath,
  fuzz,
  nastyBody,
  nastyString,
  nastyValue,
  restOperations,
  stateDiff,
  type RestOp,
} from './kit.js';

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
    // REST reaches the meeting actors (join by code, the waiting room): an actors role answers them.
    node = await startTestNode({ ROLES: 'http,actors', ...FUZZ_ENV });
    await createUser(node, 'fuzza', { username: 'ada', role: 'admin' });
    await createUser(node, 'fuzza', { username: 'pat', role: 'patient' });
    tokens.admin = await tokenFor(node, 'fuzza', 'ada');
    tokens.patient = await tokenFor(node, 'fuzza', 'pat');
  });
  afterAll(async () => node?.destroy());

  const input = (op: RestOp) =>
    fc.record({
      params: fc.record(Object.fromEntries(op.params.map((p) => [p, nastyString]))),
      query: fc.dictionary(
        fc.oneof(
          fc.constantFrom('skip', 'take', 'name', 'code', 'eventId', 'userId', 'download', 'alphabet'),
          nastyString,
        ),
        nastyString,
        { maxKeys: 3 },
      ),
      body: nastyBody(op.bodyKeys),
      who: fc.constantFrom('admin', 'admin', 'patient', 'none'),
    });

  async function send(
    op: RestOp,
    v: { params: Record<string, string>; query: Record<string, string>; body: unknown; who: string },
  ) {
    const qs = new URLSearchParams(v.query).toString();
    const path = fillPath(op.template, v.params) + (qs ? `?${qs}` : '');
    const token = tokens[v.who];
    const r = await node.http[op.method](path, {
      tenant: 'fuzza',
      ...(token ? { token } : {}),
      ...(op.method === 'get' ? {} : { body: v.body }),
    });
    const problem = breach(r);
    tally.add(op.id, problem);
    return { status: r.status, problem };
  }

  /** What the tenant has stored, but its audit trail (refusals are audited on purpose). */
  const stored = () =>
    tenantState(node, 'fuzza', { collections: TENANT_MODEL_NAMES.filter((n) => n !== 'Audit'), actors: false });
  let last: Record<string, unknown> | undefined;
  let stateChecks = 0;

  it(
    `answers ${FUZZ_PER_TARGET} malformed, wrongly typed, boundary and oversized inputs per endpoint with coded 4xx, never 5xx; a refused write changes nothing stored`,
    async () => {
      const before = tally.breaches.length;
      // Every REST row of the permission table, the one list the routers are checked against.
      expect(ops.length).toBe(Object.values(OPERATIONS).filter((o) => o.transport === 'rest').length);
      for (const op of ops.filter((o) => selected(o.id))) {
        const [arb, numRuns] = batches(input(op));
        // A read of an earlier target is no base: GETs may write too (a QR login code is stored).
        last = undefined;
        await fuzz(arb, numRuns, async (batch) => {
          const write = op.method !== 'get';
          if (!write) last = undefined;
          // The read after one batch is the read before the next: one read per batch.
          let base = write ? (last ??= await stored()) : undefined;
          const out = await Promise.all(batch.map((v) => send(op, v)));
          const problem = out.find((o) => o.problem)?.problem;
          if (problem || !write) return problem;
          const refused = batch.filter((_, i) => out[i]!.status >= 400);
          if (refused.length < batch.length) {
            // Some inputs were accepted and changed state: the refused ones are sent again on their own.
            base = last = await stored();
            if (!refused.length) return undefined;
            const again = await Promise.all(refused.map((v) => send(op, v)));
            if (again.some((o) => o.status < 400)) {
              last = undefined;
              return again.find((o) => o.problem)?.problem;
            }
          }
          stateChecks += 1;
          last = await stored();
          const changed = stateDiff(base!, last);
          return changed && `refused input changed stored state: ${changed}`;
        });
      }
      expect(tally.breaches.slice(before)).toEqual([]);
      if (FUZZ_ONLY) return;
      expect(tally.perOp.size).toBe(ops.length);
      expect(ops.filter((op) => (tally.perOp.get(op.id) ?? 0) < FUZZ_PER_TARGET).map((op) => op.id)).toEqual([]);
    },
    SOAK ? 1_800_000 : 240_000,
  );

  /**
   * Writes with a read-back: bodies near the valid shape (valid field values with, now and then, one
   * field hostile), so inputs get past validation. An accepted one must read back as the body's schema
   * parse of it (what the API promises to keep); a refused one must leave stored state as it was.
   */
  it(
    'an accepted write reads back as sent, a refused one changes nothing (notices, groups, events)',
    async () => {
      const ids = { admin: '', patient: '' };
      for (const who of ['admin', 'patient'] as const)
        ids[who] = (await node.http.get('/api/contacts/me', { tenant: 'fuzza', token: tokens[who] })).body.id;
      const text = (max: number) =>
        fc.oneof(
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: max }),
          fc.string({ minLength: 0, maxLength: max + 5 }),
          nastyString,
        );
      const maybeHostile = <T extends Record<string, unknown>>(valid: fc.Arbitrary<T>) =>
        fc
          .tuple(
            valid,
            fc.option(fc.tuple(fc.constantFrom(...Object.keys(valid as never).concat('x')), nastyValue), { freq: 3 }),
          )
          .map(([v, bad]) => (bad ? { ...v, [bad[0]]: bad[1] } : v));
      const userId = fc.constantFrom(ids.admin, ids.patient, '0123456789abcdef01234567');
      const when = fc
        .integer({ min: -4, max: 24 * 400 })
        .map((h) => new Date(Date.now() + h * 3_600_000).toISOString());
      const cases: {
        id: string;
        path: string;
        body: fc.Arbitrary<Record<string, unknown>>;
        expected(b: any): unknown;
        readBack(r: any): Promise<unknown>;
      }[] = [
        {
          id: 'notification.save',
          path: '/api/notification/save',
          body: fc.record({
            title: text(210),
            body: text(300),
            severity: fc.constantFrom('info', 'warning', 'critical', 'fatal'),
          }),
          expected: (b) => {
            const v = SaveNoticeCommand.parse(b);
            return { title: v.title, body: v.body, severity: v.severity };
          },
          readBack: async () => {
            const n = (await node.http.get('/api/notification/current', { tenant: 'fuzza', token: tokens.admin })).body
              .notice;
            return { title: n.title, body: n.body, severity: n.severity };
          },
        },
        {
          id: 'contacts.groupCreate',
          path: '/api/contacts/group/create',
          body: fc.record({ name: text(110), participantIds: fc.array(userId, { maxLength: 3 }) }),
          expected: (b) => {
            const v = CreateGroupCommand.parse(b);
            return { name: v.name, participantIds: [...new Set(v.participantIds.map((x) => x.toLowerCase()))].sort() };
          },
          readBack: async (r) => {
            const g = (
              await node.http.post('/graphql', {
                tenant: 'fuzza',
                token: tokens.admin,
                body: {
                  query: 'query G($g: ID!) { groupById(groupId: $g) { name participants { id } } }',
                  variables: { g: r.id },
                },
              })
            ).body.data.groupById;
            return { name: g.name, participantIds: g.participants.map((x: { id: string }) => x.id).sort() };
          },
        },
        {
          id: 'events.create',
          path: '/api/events/create',
          body: fc
            .record(
              {
                name: text(210),
                description: fc.option(text(300), { nil: undefined }),
                startAt: when,
                length: fc.integer({ min: -2, max: 48 }),
                participants: fc.array(fc.record({ userId }), { maxLength: 2 }),
              },
              { requiredKeys: ['name', 'startAt', 'length'] },
            )
            .map(({ length, ...b }) => ({
              ...b,
              endAt: new Date(Date.parse(b.startAt) + length * 3_600_000).toISOString(),
            })),
          expected: (b) => {
            const v = CreateEventCommand.parse(b);
            return {
              name: v.name,
              description: v.description ?? null,
              startAt: new Date(v.startAt).toISOString(),
              endAt: new Date(v.endAt).toISOString(),
              others: [...new Set(v.participants.map((x) => x.userId.toLowerCase()))]
                .filter((x) => x !== ids.admin)
                .sort(),
            };
          },
          readBack: async (r) => {
            const e = (await node.http.get(`/api/events/get/${r.id}`, { tenant: 'fuzza', token: tokens.admin })).body;
            return {
              name: e.name,
              description: e.description,
              startAt: e.startAt,
              endAt: e.endAt,
              others: e.participants
                .map((x: { userId: string }) => x.userId)
                .filter((x: string) => x !== ids.admin)
                .sort(),
            };
          },
        },
      ];
      const outcome: Record<string, { accepted: number; refused: number }> = {};
      for (const c of cases.filter((x) => selected(x.id))) {
        const o = (outcome[c.id] = { accepted: 0, refused: 0 });
        await fuzz(maybeHostile(c.body), FUZZ_PER_TARGET, async (body) => {
          const before = await stored();
          const r = await node.http.post(c.path, { tenant: 'fuzza', token: tokens.admin, body });
          tally.add(c.id as RestOp['id'], breach(r));
          if (r.status >= 500) return breach(r);
          if (r.status >= 400) {
            o.refused += 1;
            const changed = stateDiff(before, await stored());
            return (
              changed &&
              `refused ${JSON.stringify(body).slice(0, 200)} (${r.body?.code}) changed stored state: ${changed}`
            );
          }
          o.accepted += 1;
          const [want, got] = [
            JSON.stringify(c.expected(body)),
            JSON.stringify(await c.readBack(r.body.data ?? r.body)),
          ];
          return want === got
            ? undefined
            : `accepted ${JSON.stringify(body).slice(0, 200)} read back as ${got.slice(0, 300)}, expected ${want.slice(0, 300)}`;
        });
        // Both properties ran: some inputs were accepted and some refused.
        expect({ id: c.id, accepted: o.accepted > 0, refused: o.refused > 0 }).toEqual({
          id: c.id,
          accepted: true,
          refused: true,
        });
      }
      process.stdout.write(`REST round-trip: ${JSON.stringify(outcome)}\n`);
    },
    SOAK ? 1_800_000 : 180_000,
  );

  it('refuses raw bodies that are not JSON, too deep or too big, on every endpoint that takes one', async () => {
    const before = tally.breaches.length;
    for (const op of ops.filter((o) => o.method !== 'get')) {
      const path = fillPath(op.template, Object.fromEntries(op.params.map((p) => [p, '0123456789abcdef01234567'])));
      for (const b of RAW_BODIES) {
        const r = await node.http[op.method](path, {
          tenant: 'fuzza',
          token: tokens.admin,
          rawBody: b.body,
          headers: { 'content-type': b.type },
        });
        tally.add(op.id, breach(r));
        if (r.status < 400 && ['truncated JSON', 'not JSON', 'huge JSON'].includes(b.name))
          tally.breaches.push(`${op.id}: accepted ${b.name} with ${r.status}`);
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
          const r = await request(node.url!, op.method.toUpperCase(), path, {
            tenant: 'fuzza',
            token: tokens.admin,
            rawPath: true,
          });
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
    node.infra.logger.info(
      { component: 'resilience', inputs: tally.total, endpoints: tally.perOp.size, breaches: tally.breaches.length },
      'REST fuzz figures',
    );
    process.stdout.write(
      `REST fuzz: ${tally.total} inputs over ${tally.perOp.size} endpoints (min ${Math.min(...tally.perOp.values())} per endpoint), ${stateChecks} refused-write batches read back unchanged, ${tally.breaches.length} breaches\n`,
    );
  });
});
