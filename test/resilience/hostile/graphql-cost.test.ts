import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { startTestNode, type TestNode } from '../../support/node.js';

/**
 * GraphQL documents are weighed by real cost before they run, aliases of one field are capped, an
 * anonymous document gets a far smaller budget, and resolvers run under a wall-clock budget.
 */
describe('GraphQL cost limits keep the node responsive', () => {
  let node: TestNode;
  let slow: TestNode;
  let admin: string;
  let slowAdmin: string;
  const tenant = 'gqlcost';

  beforeAll(async () => {
    [node, slow] = await Promise.all([startTestNode(), startTestNode({ GRAPHQL_TIME_BUDGET_MS: '1' })]);
    await createUser(node, tenant, { username: 'ada', role: 'admin' });
    await createUser(slow, tenant, { username: 'ada', role: 'admin' });
    admin = await tokenFor(node, tenant, 'ada');
    slowAdmin = await tokenFor(slow, tenant, 'ada');
  });
  afterAll(async () => {
    await Promise.all([node?.destroy(), slow?.destroy()]);
  });

  const gql = (query: string, token?: string, on: TestNode = node) =>
    on.http.post('/graphql', { tenant, ...(token ? { token } : {}), body: { query } });
  const aliases = (n: number, field: string) => Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ');
  const codes = (r: { body: any }) => (r.body?.errors ?? []).map((e: any) => e.extensions?.code);

  it('refuses 200 aliases of the QR code, 2 500 aliases of me and 20 000 anonymous __typename before any resolver runs', async () => {
    const qr = await gql(`{ ${aliases(200, 'generatePrivateServerConfigQrCode { dataUrl }')} }`, admin);
    expect(qr.status).toBe(400);
    expect(qr.body.data).toBeUndefined();
    expect(codes(qr).length).toBeGreaterThan(0);
    const me = await gql(`{ ${aliases(2500, 'me { id }')} }`, admin);
    expect(me.status).toBe(400);
    expect(me.body.data).toBeUndefined();
    const typenames = await gql(`{ ${Array.from({ length: 20_000 }, () => '__typename').join(' ')} }`);
    expect(typenames.status).toBe(400);
    expect(codes(typenames)).toEqual(['bad_request']);
  });

  it('weighs the QR code by its rendering cost: three renders in one document are over budget', async () => {
    const three = await gql(`{ ${aliases(3, 'generatePrivateServerConfigQrCode { dataUrl }')} }`, admin);
    expect(codes(three)).toEqual(['query_too_complex']);
    const eleven = await gql(`{ ${aliases(11, 'hasPin')} }`, admin);
    expect(codes(eleven)).toEqual(['validation_failed']);
  });

  it('gives an anonymous document a far smaller budget than a signed-in one', async () => {
    const doc = `{ ${aliases(4, 'basicTenantInfo { name displayName baseUrl realm }')} }`;
    const anonymous = await gql(doc);
    expect(anonymous.status).toBe(401);
    expect(codes(anonymous)).toEqual(['unauthenticated']);
    const signedIn = await gql(doc, admin);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.errors).toBeUndefined();
    const one = await gql('{ basicTenantInfo { name } }');
    expect(one.body).toEqual({ data: { basicTenantInfo: { name: tenant } } });
    const typenames = await gql(
      `{ basicTenantInfo { name } ${Array.from({ length: 9 }, (_, i) => `t${i}: __typename`).join(' ')} ${Array.from({ length: 9 }, (_, i) => `u${i}: __typename`).join(' ')} ${Array.from({ length: 9 }, (_, i) => `v${i}: __typename`).join(' ')} }`,
    );
    expect(codes(typenames)).toEqual(['validation_failed']);
  });

  it("stops starting resolvers once the request's time budget is spent", async () => {
    const r = await gql('{ me { id contact { id displayName } } }', slowAdmin, slow);
    expect(r.status).toBe(200);
    expect(codes(r)).toContain('timeout');
  });
});
