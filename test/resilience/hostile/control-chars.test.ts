import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { startTestNode, type TestNode } from '../../support/node.js';
import { connect, type HubClient } from '../../support/hub-client.js';
import { FUZZ_ENV, fillPath, opsOf, restOperations } from './kit.js';
import { bodyFor, paramValues, seedTenant, type SeededTenant } from '../isolation/seed.js';

/** NUL, other C0 controls and DEL: each string input gets one of them, NUL always. */
const CONTROLS = ['\u0000', '\u0001', '\u0008', '\u000b', '\u001b', '\u001f', '\u007f'];

type Openapi = { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };
const openapi = JSON.parse(readFileSync(new URL('../../../docs/api/openapi.json', import.meta.url), 'utf8')) as Openapi;

/** What every refusal must look like: 400 validation_failed naming the field that carried the control. */
function namesField(status: number, body: any, field: string): string | undefined {
  if (
    status === 400 &&
    body?.code === 'validation_failed' &&
    (body.errors ?? []).some(
      (e: { field: string }) => e.field === field || e.field.endsWith(`.${field}`) || e.field.includes(`.${field}.`),
    )
  )
    return undefined;
  return `${status} ${JSON.stringify(body).slice(0, 200)}`;
}

describe('control characters in text inputs are refused with 400 naming the field, on every transport', () => {
  let node: TestNode;
  let t: SeededTenant;
  let admin: string;
  const open: HubClient[] = [];
  let breaches: string[] = [];
  let tried = 0;
  beforeEach(() => {
    breaches = [];
  });

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors', ...FUZZ_ENV });
    t = await seedTenant(node, 'ctlchars', 'CTL');
    admin = t.users.admin!.token;
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node?.destroy();
  });

  it('REST: every path parameter, query parameter and JSON body field', async () => {
    for (const op of restOperations()) {
      const base = paramValues(t, 'admin');
      const spec = openapi.paths[op.template]?.[op.method];
      const queryKeys = (spec?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      const sites = [
        ...op.params.map((p) => ({ in: 'params', key: p })),
        ...queryKeys.map((k) => ({ in: 'query', key: k })),
        ...op.bodyKeys.map((k) => ({ in: 'body', key: k })),
      ];
      for (const [i, site] of sites.entries()) {
        for (const ch of i % 2 ? ['\u0000'] : ['\u0000', CONTROLS[1 + (i % (CONTROLS.length - 1))]!]) {
          const bad = `ab${ch}cd`;
          const path = fillPath(op.template, site.in === 'params' ? { ...base, [site.key]: bad } : base);
          // A required query parameter (the provisioning code) is given, so the probed site is what fails.
          const required =
            op.id === 'admin.migrate' && site.key !== 'code'
              ? `?code=${encodeURIComponent(node.infra.config.auth.provisioningCode)}`
              : '';
          const query = site.in === 'query' ? `?${site.key}=${encodeURIComponent(bad)}` : required;
          const body =
            op.method === 'get'
              ? undefined
              : { ...bodyFor(t, 'admin'), ...(site.in === 'body' ? { [site.key]: bad } : {}) };
          const r = await node.http[op.method](path + query, {
            tenant: t.name,
            token: admin,
            ...(body ? { body } : {}),
          });
          tried++;
          const field = site.key.replace(/^\*/, '');
          const problem = namesField(r.status, r.body, field);
          if (problem) breaches.push(`${op.id} ${site.in}.${site.key} ${JSON.stringify(ch)}: ${problem}`);
        }
      }
    }
    expect(breaches).toEqual([]);
  });

  it('multipart: contact update and upload fields', async () => {
    const form = (fields: Record<string, string>) => {
      const boundary = 'ctlchars-boundary';
      const parts = Object.entries(fields).map(
        ([k, v]) => `--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
      );
      return {
        rawBody: `${parts.join('')}--${boundary}--\r\n`,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      };
    };
    for (const field of ['displayName', 'firstName', 'lastName', 'title', 'department', 'phone', 'email']) {
      const r = await node.http.post('/api/contacts/update', {
        tenant: t.name,
        token: admin,
        ...form({ [field]: 'ab\u0000cd' }),
      });
      tried++;
      const problem = namesField(r.status, r.body, field);
      if (problem) breaches.push(`contacts.update ${field}: ${problem}`);
    }
    for (const field of ['sessionId', 'clientRef', 'eventId']) {
      const r = await node.http.post('/api/media/upload', {
        tenant: t.name,
        token: admin,
        ...form({ [field]: 'ab\u001bcd' }),
      });
      tried++;
      const problem = namesField(r.status, r.body, field);
      if (problem) breaches.push(`media.upload ${field}: ${problem}`);
    }
    expect(breaches).toEqual([]);
  });

  it('GraphQL: string arguments as literals and as variables', async () => {
    const gql = (query: string, variables?: Record<string, unknown>) =>
      node.http.post('/graphql', {
        tenant: t.name,
        token: admin,
        body: { query, ...(variables ? { variables } : {}) },
      });
    const cases: [string, Record<string, unknown> | undefined, string][] = [
      ['{ myContacts(alphabet: "a\\u0000") { total } }', undefined, 'alphabet'],
      ['query($a: String) { myContacts(alphabet: $a) { total } }', { a: 'a\u0000' }, 'variables.a'],
      ['{ groupById(groupId: "x\\u001f") { id } }', undefined, 'groupId'],
      ['query($g: ID!) { groupById(groupId: $g) { id } }', { g: `${t.groupId}\u0000` }, 'variables.g'],
      [
        'query($p: PagingInput) { myContacts(paging: $p) { total } }',
        { p: { skip: 0, take: 5, ['x\u0000']: 1 } },
        'variables.p.x\u0000',
      ],
    ];
    for (const [query, variables, field] of cases) {
      const r = await gql(query, variables);
      tried++;
      const e = r.body?.errors?.[0];
      if (!(r.status === 400 && e?.extensions?.code === 'validation_failed' && e.message.startsWith(`${field}:`)))
        breaches.push(`graphql ${query}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    }
    expect(breaches).toEqual([]);
  });

  it('hub: every method, with a control character in a positional argument and in an object field', async () => {
    const s = await connect(node.url!, t.name, { token: admin });
    open.push(s);
    const ask = (method: string, args: unknown[]) =>
      (s.timeout(15_000) as unknown as { emitWithAck(ev: string, ...a: unknown[]): Promise<any> }).emitWithAck(
        method,
        ...args,
      );
    for (const [i, op] of opsOf('hub').entries()) {
      const ch = CONTROLS[i % CONTROLS.length]!;
      for (const [args, field] of [
        [[`ab${ch}`], 'args.0'],
        [[{ eventId: t.eventId, name: `x${ch}` }], 'args.0.name'],
      ] as [unknown[], string][]) {
        const ack = await ask(op.name, args);
        tried++;
        const named = (ack?.error?.errors ?? []).some((e: { field: string }) => e.field === field);
        if (!(ack?.ok === false && ack.error.code === 'validation_failed' && named))
          breaches.push(`hub ${op.name} ${field} ${JSON.stringify(ch)}: ${JSON.stringify(ack).slice(0, 200)}`);
      }
    }
    expect(breaches).toEqual([]);
    expect((await node.http.get('/healthz')).status).toBe(200);
    process.stdout.write(`Control characters: ${tried} inputs, ${breaches.length} breaches\n`);
  });
});
