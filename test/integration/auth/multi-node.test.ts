import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, loginFor } from '../../support/auth.js';

describe('tokens and revocation across two nodes sharing Redis and MongoDB', () => {
  let a: TestNode;
  let b: TestNode;
  let aliceId: string;

  beforeAll(async () => {
    a = await startTestNode();
    b = await startTestNode({
      REDIS_PREFIX: a.config.redis.prefix,
      MONGODB_CATALOG_DB: a.config.mongo.catalogDb,
      MONGODB_TENANT_DB_PREFIX: a.config.mongo.tenantDbPrefix,
    });
    aliceId = await createUser(a, 'acme', { username: 'alice', role: 'clinician' });
  });
  afterAll(async () => {
    await b.stop();
    await a.destroy();
  });

  it("publishes the same JWKS from both nodes and verifies each other's tokens", async () => {
    const [ja, jb] = await Promise.all([a.http.get('/.well-known/jwks.json'), b.http.get('/.well-known/jwks.json')]);
    expect(ja.body).toEqual(jb.body);
    const login = await loginFor(a, 'acme', 'alice');
    // A call that needs a permission of the role (contacts:read), not a ping: the other node honours the rights too.
    expect((await b.http.get('/api/contacts/get', { tenant: 'acme', token: login.accessToken })).status).toBe(200);
    const refreshed = await b.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: login.refreshToken },
    });
    expect(refreshed.status).toBe(200);
    // The answer lost, the client asks node A with the same token: the grace holds across nodes (decision 1103).
    const retried = await a.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: login.refreshToken },
    });
    expect(retried.status).toBe(200);
    expect((await a.http.get('/api/contacts/get', { tenant: 'acme', token: retried.body.accessToken })).status).toBe(
      200,
    );
    // Now two rotations back: reuse.
    const reuse = await a.http.post('/api/account/refresh', {
      tenant: 'acme',
      body: { refreshToken: login.refreshToken },
    });
    expect(reuse.body.code).toBe('session_revoked');
  });

  it('a logout on one node is refused on the other at once', async () => {
    const login = await loginFor(b, 'acme', 'alice');
    expect(
      (await a.http.post(`/api/account/${aliceId}/logout`, { tenant: 'acme', token: login.accessToken })).status,
    ).toBe(200);
    const after = await b.http.get('/api/tenant/ping', { tenant: 'acme', token: login.accessToken });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('session_revoked');
  });
});
