import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { startTestNode, type TestNode } from '../../support/node.js';

/** Defects the contract test (schemathesis against the served OpenAPI document) found, kept fixed. */
describe('REST answers what the OpenAPI document says', () => {
  let node: TestNode;
  let token: string;
  let otherId: string;
  beforeAll(async () => {
    node = await startTestNode();
    await createUser(node, 'cfx', { username: 'cora', role: 'clinician' });
    otherId = String(await createUser(node, 'cfx', { username: 'pat', role: 'patient' }));
    token = await tokenFor(node, 'cfx', 'cora');
  });
  afterAll(async () => node?.destroy());

  it('ignores fields the schema does not know, whatever they hold, in a valid request', async () => {
    const r = await node.http.post('/api/contacts/setFavourite', {
      tenant: 'cfx',
      token,
      body: { contactId: otherId, favourite: true, 'x\u0001': { 'y\u0002': 'z\u0003' } },
    });
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 200, code: undefined });
  });

  it('still refuses a control character in a field it reads, naming it', async () => {
    const r = await node.http.post('/api/contacts/group/create', {
      tenant: 'cfx',
      token,
      body: { name: 'a\u0001b', participantIds: [otherId] },
    });
    expect({ status: r.status, code: r.body.code, field: r.body.errors?.[0]?.field }).toEqual({
      status: 400,
      code: 'validation_failed',
      field: 'name',
    });
  });

  it('answers 405 method_not_allowed with Allow for a declared path asked with another method', async () => {
    const r = await node.http.post('/api/contacts/me', { tenant: 'cfx', token, body: {} });
    expect({ status: r.status, code: r.body.code, allow: r.headers.allow }).toEqual({
      status: 405,
      code: 'method_not_allowed',
      allow: 'GET, HEAD',
    });
    const files = await node.http.post('/files/cfx/media/a/b', { tenant: 'cfx', token, body: {} });
    expect({ status: files.status, allow: files.headers.allow }).toEqual({ status: 405, allow: 'GET, HEAD' });
    expect((await node.http.get('/api/contacts/nothing-here', { tenant: 'cfx', token })).body.code).toBe(
      'route_not_found',
    );
  });
});
