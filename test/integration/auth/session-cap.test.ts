import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, loginFor } from '../../support/auth.js';

describe('the per-user session cap', () => {
  let node: TestNode;

  beforeAll(async () => {
    node = await startTestNode();
    await createUser(node, 'acme', { username: 'pat', role: 'patient' });
    const { db } = await node.services.tenants.require('acme');
    await db.models.TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'security.session.maxSessionsPerUser': 2 } });
  });
  afterAll(async () => node.destroy());

  it('revokes the oldest session when a user opens one too many', async () => {
    const first = await loginFor(node, 'acme', 'pat');
    const second = await loginFor(node, 'acme', 'pat');
    const third = await loginFor(node, 'acme', 'pat');
    const ping = (t: string) => node.http.get('/api/tenant/ping', { tenant: 'acme', token: t });
    expect((await ping(first.accessToken)).body.code).toBe('session_revoked');
    // The sessions left keep their rights: a call that needs one (contacts:read), not a ping.
    const contacts = (t: string) => node.http.get('/api/contacts/get', { tenant: 'acme', token: t });
    expect((await contacts(second.accessToken)).status).toBe(200);
    expect((await contacts(third.accessToken)).status).toBe(200);
  });
});
