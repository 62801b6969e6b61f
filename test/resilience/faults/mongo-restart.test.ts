import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { dedicatedMongo, type DedicatedService } from '../../support/dedicated-services.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { recordResult } from './results.js';

/**
 * The MongoDB-protocol server (a private instance, never the shared one) goes away under a running
 * node: requests must answer a coded 503 with Retry-After quickly (no 500, no hang), and the node must
 * serve again once the server is back, without a restart.
 */
describe('faults: MongoDB-protocol server restarted', () => {
  let mongo: DedicatedService;
  let node: TestNode;
  let token: string;

  beforeAll(async () => {
    mongo = await dedicatedMongo();
    node = await startTestNode({ MONGODB_URI: mongo.url, MONGODB_TIMEOUT_MS: '1500' });
    await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    token = await tokenFor(node, 'acme', 'alice');
  }, 60_000);
  afterAll(async () => {
    await node?.destroy().catch(() => undefined);
    await mongo?.destroy();
  });

  const me = () => node.http.get('/api/contacts/me', { tenant: 'acme', token });

  it('answers 503 service_unavailable with Retry-After while down, then recovers by itself', async () => {
    expect((await me()).status).toBe(200);
    await mongo.stop();

    const down = [await me(), await me(), await me()];
    for (const r of down) {
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ code: 'service_unavailable' });
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }

    await mongo.start();
    let back = await me();
    while (back.status !== 200) {
      expect(back.status).toBe(503);
      await new Promise((r) => setTimeout(r, 250));
      back = await me();
    }
    expect(back.body).toMatchObject({ username: 'alice' });
    recordResult('mongo-restart', {
      downRequests: down.length,
      statuses: down.map((r) => r.status),
    });
  }, 90_000);
});
