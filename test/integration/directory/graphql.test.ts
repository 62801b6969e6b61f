import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { buildSchema, getIntrospectionQuery, parse, printSchema, validate } from 'graphql';
import { MAX_DEPTH, queryLimits } from '../../../src/http/graphql/limits.js';
import { typeDefs } from '../../../src/http/graphql/schema.js';
import { as, world, type World } from './fixtures.js';

const gql = (
  w: World,
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
  tenant = w.tenantA,
) => w.node.http.post('/graphql', { tenant, ...(token ? { token } : {}), body: { query, variables } });

describe('GraphQL /graphql', () => {
  let w: World;
  let groupId: string;
  beforeAll(async () => {
    w = await world('gqla', 'gqlb');
    groupId = (
      await as(w, w.a.alice).post('/api/contacts/group/create', {
        name: 'Team',
        participantIds: [w.a.bob.id, w.a.pat.id],
      })
    ).body.id;
    await as(w, w.a.alice).post('/api/contacts/setFavourite', { contactId: w.a.pat.id });
  });
  afterAll(async () => w.node.destroy());

  it('limits depth on recursive types (the rule, on a schema that allows deep nesting)', () => {
    const schema = buildSchema('type Node { id: ID! child: Node } type Query { root: Node }');
    const nest = (n: number): string => (n === 0 ? 'id' : `child { ${nest(n - 1)} }`);
    expect(validate(schema, parse(`{ root { ${nest(MAX_DEPTH - 2)} } }`), [queryLimits])).toEqual([]);
    const errors = validate(schema, parse(`{ root { ${nest(MAX_DEPTH + 1)} } }`), [queryLimits]);
    expect(errors[0]?.message).toMatch(/depth/);
  });

  it('keeps docs/api/schema.graphql equal to the served schema', () => {
    const checkedIn = readFileSync(new URL('../../../docs/api/schema.graphql', import.meta.url), 'utf8');
    expect(checkedIn.trim()).toBe(printSchema(buildSchema(typeDefs)).trim());
  });

  it('me: user, permissions and own contact card', async () => {
    const r = await gql(
      w,
      w.a.alice.token,
      '{ me { id username role permissions tenant contact { id online displayName } } }',
    );
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.me).toMatchObject({
      id: w.a.alice.id,
      username: 'alice',
      role: 'clinician',
      tenant: 'gqla',
      contact: { id: w.a.alice.id, displayName: 'Alice Moreau' },
    });
    expect(r.body.data.me.permissions).toContain('events:write');
  });

  it('tenant operations: config, basic info, security rules', async () => {
    const r = await gql(
      w,
      w.a.pat.token,
      '{ tenantConfig { tenant displayName uploads { maxBytes allowedExtensions } features { guestJoin } } tenantSecurityRules { pin { minLength } lockout { maxAttempts } loginCodeTtlSeconds } }',
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.tenantConfig.tenant).toBe('gqla');
    expect(r.body.data.tenantSecurityRules.pin.minLength).toBeGreaterThan(0);
    const pub = await gql(w, undefined, '{ basicTenantInfo { name displayName realm baseUrl } }');
    expect(pub.body.data.basicTenantInfo).toMatchObject({ name: 'gqla', realm: 'gqla' });
    expect(pub.body.data.basicTenantInfo.baseUrl).toContain('gqla.localhost');
  });

  it('private server config and its QR code need tenant:admin', async () => {
    const ok = await gql(
      w,
      w.a.admin.token,
      '{ generatePrivateServerConfig { tenant hubUrl graphqlUrl json oidc { issuer } } generatePrivateServerConfigQrCode { dataUrl config { tenant } } }',
    );
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.generatePrivateServerConfig.hubUrl).toMatch(/\/hubs\/mobile$/);
    expect(JSON.parse(ok.body.data.generatePrivateServerConfig.json).tenant).toBe('gqla');
    expect(ok.body.data.generatePrivateServerConfigQrCode.dataUrl).toMatch(/^data:image\/png;base64,/);
    const denied = await gql(w, w.a.pat.token, '{ generatePrivateServerConfig { tenant } }');
    expect(denied.body.errors[0].extensions.code).toBe('permission_denied');
    const anon = await gql(w, undefined, '{ generatePrivateServerConfigQrCode { dataUrl } }');
    expect(anon.body.errors[0].extensions.code).toBe('unauthenticated');
  });

  it('myContacts: sort types, paging, alphabet, call list; contactAlphabets', async () => {
    const q = `query($s: ContactSortType, $p: PagingInput, $a: String, $c: Boolean) { myContacts(sortType: $s, paging: $p, alphabet: $a, isCallList: $c) { total take items { id username favourite online } } }`;
    const byName = await gql(w, w.a.alice.token, q, { p: { take: 2 } });
    expect(byName.body.data.myContacts.items.map((c: { username: string }) => c.username)).toEqual(['admin', 'bob']);
    expect(byName.body.data.myContacts.total).toBe(5);
    const favFirst = await gql(w, w.a.alice.token, q, { s: 'FAVOURITES_FIRST', p: { take: 2 } });
    expect(favFirst.body.data.myContacts.items.map((c: { username: string }) => c.username)).toEqual(['pat', 'admin']);
    expect(favFirst.body.data.myContacts.items[0].favourite).toBe(true);
    const letter = await gql(w, w.a.alice.token, q, { a: 's' });
    expect(letter.body.data.myContacts.items.map((c: { username: string }) => c.username)).toEqual(['sam']);
    const calls = await gql(w, w.a.alice.token, q, { c: true });
    expect(calls.body.data.myContacts.total).toBe(0);
    const capped = await gql(w, w.a.alice.token, q, { p: { take: 10000 } });
    expect(capped.body.data.myContacts.take).toBe(w.node.config.limits.pageMaxTake);
    const bad = await gql(w, w.a.alice.token, q, { a: 'xyz' });
    expect(bad.body.errors[0].extensions.code).toBe('validation_failed');
    expect(bad.body.errors[0].extensions.errors[0].field).toBe('alphabet');
    const alpha = await gql(w, w.a.alice.token, '{ contactAlphabets { letter count } }');
    expect(alpha.body.data.contactAlphabets).toEqual(
      expect.arrayContaining([
        { letter: 'P', count: 1 },
        { letter: 'W', count: 1 },
      ]),
    );
  });

  it('groupById resolves owner and participants in batches; other tenants get group_not_found', async () => {
    const q = `query($id: ID!) { groupById(groupId: $id) { id name participantCount owner { username } participants { username online } } }`;
    const r = await gql(w, w.a.alice.token, q, { id: groupId });
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.groupById).toMatchObject({ name: 'Team', participantCount: 2, owner: { username: 'alice' } });
    expect(r.body.data.groupById.participants.map((p: { username: string }) => p.username).sort()).toEqual([
      'bob',
      'pat',
    ]);
    const foreign = await gql(w, w.b.alice.token, q, { id: groupId }, w.tenantB);
    expect(foreign.body.errors[0].extensions.code).toBe('group_not_found');
    expect(foreign.body.data).toBeNull();
  });

  it('hasPin and myNotice with the seen flag', async () => {
    const pin = await gql(w, w.a.pat.token, '{ hasPin }');
    expect(pin.body.data.hasPin).toBe(false);
    const none = await gql(w, w.a.pat.token, '{ myNotice { id } }');
    expect(none.body.data.myNotice).toBeNull();
    const saved = await as(w, w.a.admin).post('/api/notification/save', {
      title: 'Maintenance',
      body: 'Tonight 22:00',
    });
    const before = await gql(w, w.a.pat.token, '{ myNotice { id title seen seenAt } }');
    expect(before.body.data.myNotice).toMatchObject({ id: saved.body.id, seen: false, seenAt: null });
    await as(w, w.a.pat).post(`/api/contacts/notificationSeen/${saved.body.id}`);
    const after = await gql(w, w.a.pat.token, '{ myNotice { seen seenAt } }');
    expect(after.body.data.myNotice.seen).toBe(true);
  });

  it('refuses too deep or malformed queries with coded errors and a correlation id', async () => {
    const introspection = await gql(
      w,
      w.a.alice.token,
      '{ me { contact { id } } __schema { types { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } } }',
    );
    expect(introspection.body.errors).toBeUndefined();
    // The whole schema, as explorers and code generators ask for it, without a token: introspection
    // describes no one's data and counts once, like in the structural limits.
    const anonymous = await gql(w, undefined, getIntrospectionQuery());
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.errors).toBeUndefined();
    expect(anonymous.body.data.__schema.queryType.name).toBe('Query');
    // Data beside it still needs a token.
    const mixed = await gql(w, undefined, `{ __schema { types { name } } me { id } }`);
    expect(mixed.body.errors[0].extensions.code).toBe('unauthenticated');
    const frag =
      'fragment F on Group { participants { id } } query { a: groupById(groupId: "1") { ...F } ' +
      Array.from({ length: 20 }, (_, i) => `g${i}: groupById(groupId: "1") { ...F }`).join(' ') +
      ' }';
    const costly = await gql(w, w.a.alice.token, frag);
    expect(costly.body.errors[0].extensions.code).toBe('validation_failed');
    expect(costly.body.errors[0].message).toMatch(/cost/);
    const bad = await gql(w, w.a.alice.token, '{ me { ');
    expect(bad.body.errors[0].extensions.code).toBe('bad_request');
    const unknown = await gql(w, w.a.alice.token, '{ nope }');
    expect(unknown.body.errors[0].extensions.code).toBe('validation_failed');
    expect(unknown.body.errors[0].extensions.correlationId).toBeTruthy();
  });
});
