import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { shardOf } from '../../../src/actors/runtime/index.js';
import type { HubRoleHandle } from '../../../src/hub/hub.role.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv, uniqueId } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { waitForMembers } from '../../support/actor-kit.js';
import { connect, must, recorder, type HubClient } from '../../support/hub-client.js';

const SHARDS = 16;

/**
 * Actors hosted apart from the hub: a hub node without the `actors` role (ROLES=http,hub) asks the
 * actors of a separate process running ROLES=actors alone, which records the call in MongoDB and
 * pushes through the Redis relay to the hub's sockets.
 */
describe('an actors-only node hosts the actors a hub-only node asks', () => {
  const id = uniqueId();
  const shared = {
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
    ACTOR_SHARDS: String(SHARDS),
  };
  const actorsId = `actors-only-${id}`;
  let hubNode: TestNode;
  let actorsNode: ChildNode;
  const open: HubClient[] = [];
  const users: Record<string, string> = {};

  beforeAll(async () => {
    hubNode = await startTestNode({ ...shared, ROLES: 'http,hub' });
    for (const u of ['alice', 'bob']) users[u] = await createUser(hubNode, 'acme', { username: u, role: 'clinician' });
    actorsNode = await spawnChildNode(testEnv({ ...shared, ROLES: 'actors', NODE_ID: actorsId, LOG_LEVEL: 'warn' }));
    await waitForMembers((hubNode.roles.get('hub') as HubRoleHandle).actors, [actorsId]);
  }, 90_000);
  afterAll(async () => {
    for (const s of open) s.close();
    if (actorsNode) await actorsNode.stop();
    await hubNode?.destroy();
  });

  it('rings, connects and records a call through actors on the actors-only node', async () => {
    const alice = await connect(hubNode.url!, 'acme', { token: await tokenFor(hubNode, 'acme', 'alice') });
    const bob = await connect(hubNode.url!, 'acme', { token: await tokenFor(hubNode, 'acme', 'bob') });
    open.push(alice, bob);
    const [ra, rb] = [recorder(alice), recorder(bob)];
    const info = await must(alice, 'initCall', { calleeIds: [users.bob] });
    expect((await rb.next('onNewCall')).call.callId).toBe(info.callId);
    expect((await must(bob, 'acceptCall', { callId: info.callId })).status).toBe('active');
    expect((await ra.next('onCallUpdated')).call.status).toBe('active');
    await must(alice, 'endCall', { callId: info.callId });
    expect(await rb.next('onEndCall')).toMatchObject({ callId: info.callId, status: 'ended' });
    // The call actor ran on the actors-only node (the only one hosting), which wrote the record.
    const system = (hubNode.roles.get('hub') as HubRoleHandle).actors;
    expect(await system.leases.holder(shardOf({ tenant: 'acme', kind: 'call', id: info.callId }, SHARDS))).toBe(
      actorsId,
    );
    const rec = await hubNode.infra.mongo.tenantDb('acme').models.CallRecord.findById(info.callId).lean();
    expect(rec).toMatchObject({ status: 'ended', actorEpoch: expect.any(Number) });
  });

  it('hosts actors without the hub: what the actors role loads at run time includes nothing of src/hub', async () => {
    // The run-time graph (type-only imports dropped, dynamic imports followed) from the role's module, by
    // the dependency tool `npm run cycles` uses. From src/composition/roles.ts the same graph reaches the hub.
    const dir = await mkdtemp(path.join(tmpdir(), 'deps-'));
    const graph = async (entry: string) => {
      const out = path.join(dir, `${path.basename(entry)}.json`);
      await promisify(execFile)(process.execPath, [
        'node_modules/dpdm/lib/bin/dpdm.js',
        '--no-warning',
        '--no-tree',
        '--no-circular',
        '--no-progress',
        '-T',
        '-o',
        out,
        entry,
      ]);
      return Object.keys((JSON.parse(await readFile(out, 'utf8')) as { tree: Record<string, unknown> }).tree);
    };
    const files = await graph('src/composition/actors.role.ts');
    expect((await graph('src/composition/roles.ts')).filter((f) => f.startsWith('src/hub/')).length).toBeGreaterThan(0);
    await rm(dir, { recursive: true, force: true });
    expect(files).toEqual(
      expect.arrayContaining([
        'src/actors/actor-deps.ts',
        'src/actors/runtime/actor-system.ts',
        'src/actors/meeting/meeting.actor.ts',
      ]),
    );
    expect(files.filter((f) => f.startsWith('src/hub/'))).toEqual([]);
  });
});
