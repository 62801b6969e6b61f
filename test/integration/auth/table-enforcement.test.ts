import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { OPERATIONS, type OperationId } from '../../../src/operations/operation-table.js';
import { readFileSync } from 'node:fs';
import { buildSchema, isEnumType, isInputObjectType, isListType, isNonNullType, type GraphQLInputType } from 'graphql';

/** The served GraphQL schema (docs/api/schema.graphql is written from it and checked to match). */
const schema = buildSchema(readFileSync(new URL('../../../docs/api/schema.graphql', import.meta.url), 'utf8'));

/** A well-formed literal of a GraphQL input type: only the permission check may refuse the request. */
function literal(t: GraphQLInputType): string {
  if (isNonNullType(t)) return literal(t.ofType);
  if (isListType(t)) return `[${literal(t.ofType)}]`;
  if (isEnumType(t)) return t.getValues()[0]!.name;
  if (isInputObjectType(t))
    return `{ ${Object.values(t.getFields())
      .filter((f) => isNonNullType(f.type))
      .map((f) => `${f.name}: ${literal(f.type)}`)
      .join(', ')} }`;
  if (t.name === 'ID') return '"0123456789abcdef01234567"';
  if (t.name === 'Int' || t.name === 'Float') return '1';
  if (t.name === 'Boolean') return 'true';
  return '"x"';
}

/** The operation's required arguments, each with a well-formed value (`(eventId: "...")`), or ''. */
function requiredArgs(name: string): { kind: 'query' | 'mutation'; args: string } {
  const mutation = schema.getMutationType()?.getFields()[name];
  const field = mutation ?? schema.getQueryType()?.getFields()[name];
  if (!field) throw new Error(`${name} is in the permission table but not in docs/api/schema.graphql`);
  const required = field.args.filter((a) => isNonNullType(a.type));
  return {
    kind: mutation ? 'mutation' : 'query',
    args: required.length ? `(${required.map((a) => `${a.name}: ${literal(a.type)}`).join(', ')})` : '',
  };
}

/** A concrete request path for a table entry's path template. */
function concrete(path: string): string {
  return path
    .replace('{*path}', 'some/file.txt')
    .replace(/\{(tenant|tenantId|tenantName)\}/g, 'acme')
    .replace(/\{[A-Za-z]*Id\}/g, '0123456789abcdef01234567')
    .replace(/\{[A-Za-z]+\}/g, 'x');
}

describe('every REST endpoint and GraphQL operation enforces the permission table', () => {
  let node: TestNode;
  let nobody: string;

  beforeAll(async () => {
    node = await startTestNode();
    await createUser(node, 'acme', { username: 'nobody', role: 'powerless' });
    const { db } = await node.services.tenants.require('acme');
    await db.models.Role.create({ name: 'powerless', description: 'No permissions (test)', permissions: [] });
    nobody = await tokenFor(node, 'acme', 'nobody');
  });
  afterAll(async () => node.destroy());

  const guarded = (transport: string) =>
    (Object.keys(OPERATIONS) as OperationId[])
      .map((id) => [id, OPERATIONS[id]] as const)
      .filter(([, e]) => e.transport === transport && e.requires !== 'public' && e.requires !== 'authenticated');

  it('answers 403 permission_denied on REST without the permission, and 401 without a token', async () => {
    const outcomes: string[] = [];
    for (const [id, e] of guarded('rest')) {
      const [method, path] = e.name.split(' ') as [string, string];
      const r = await node.http[method.toLowerCase() as 'get' | 'post'](concrete(path), {
        tenant: 'acme',
        token: nobody,
        body: {},
      });
      const anon = await node.http[method.toLowerCase() as 'get' | 'post'](concrete(path), {
        tenant: 'acme',
        body: {},
      });
      outcomes.push(`${id} ${r.status} ${r.body?.code} ${anon.status}`);
    }
    for (const o of outcomes) expect(o).toMatch(/ 403 permission_denied 401$/);
  });

  it('answers permission_denied on GraphQL operations without the permission', async () => {
    const outcomes: string[] = [];
    for (const [id, e] of guarded('graphql')) {
      const { kind, args } = requiredArgs(e.name);
      const ask = (selection: string) =>
        node.http.post('/graphql', {
          tenant: 'acme',
          token: nobody,
          body: { query: `${kind} { ${e.name}${args}${selection} }` },
        });
      let r = await ask('');
      if (/must have a selection/.test(JSON.stringify(r.body))) r = await ask(' { __typename }');
      const codes = (r.body?.errors ?? []).map((x: { extensions?: { code?: string } }) => x.extensions?.code);
      outcomes.push(`${id} ${codes.includes('permission_denied') ? 'denied' : JSON.stringify(r.body).slice(0, 200)}`);
    }
    for (const o of outcomes) expect(o).toMatch(/ denied$/);
  });
});
