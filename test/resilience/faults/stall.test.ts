import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorKeys } from '../../../src/actors/runtime/actor-keys.js';
import { actorSystemOf, rendezvousOwner, shardOf } from '../../../src/actors/runtime/index.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv, uniqueId } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { waitForMembers } from '../../support/actor-kit.js';
import { connect, must, type HubClient } from '../../support/hub-client.js';
import { callLive, pause } from './chaos-agents.js';
import { recordResult } from './results.js';

const SHARDS = 16;
const LEASE_MS = 1500;

/**
 * Hub-level variant of the actors' stall test: the whole process owning a meeting is frozen (SIGSTOP:
 * no timers, no lease renewal, no socket I/O) for several lease lengths while a host on another node
 * carries on, then resumed. The frozen node must not serve from its stale activation afterwards, and a
 * notify it had in flight when frozen must not duplicate or hide the newer owner's acknowledged one.
 */
describe('faults: hub node frozen longer than its actor lease', () => {
  const id = uniqueId();
  const shared = {
    ROLES: 'http,hub,actors',
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
    ACTOR_SHARDS: String(SHARDS),
    ACTOR_LEASE_MS: String(LEASE_MS),
  };
  const childId = `stall-${id}`;
  let node: TestNode;
  let child: ChildNode;
  const users: Record<string, string> = {};
  const open: HubClient[] = [];

  beforeAll(async () => {
    node = await startTestNode(shared);
    for (const [u, role] of [
      ['alice', 'clinician'],
      ['bob', 'clinician'],
    ] as const)
      users[u] = await createUser(node, 'acme', { username: u, role });
    child = await spawnChildNode(testEnv({ ...shared, NODE_ID: childId, LOG_LEVEL: 'warn' }), 60_000);
    await waitForMembers(actorSystemOf(node.roles), [node.config.nodeId, childId]);
  }, 120_000);
  afterAll(async () => {
    open.forEach((s) => s.close());
    child?.proc.kill('SIGCONT');
    await child?.kill();
    await node.destroy();
  });

  async function leaseOf(shard: number): Promise<{ node: string; epoch: number }> {
    const v = (await node.infra.redis.get(actorKeys(`${shared.REDIS_PREFIX}actors:`).lease(shard))) ?? '|0';
    return { node: v.slice(0, v.lastIndexOf('|')), epoch: Number(v.slice(v.lastIndexOf('|') + 1)) };
  }

  async function meetingOwnedByChild(): Promise<string> {
    const host = await node.services.auth.verifyAccessToken('acme', await tokenFor(node, 'acme', 'alice'));
    for (let i = 0; i < 64; i++) {
      const e = await node.services.events.create(host, {
        name: `Stall ${i}`,
        startAt: new Date().toISOString(),
        endAt: new Date(Date.now() + 3_600_000).toISOString(),
        participants: [{ userId: users.bob!, role: 'participant' }],
        attachments: [],
      });
      if (
        rendezvousOwner(
          shardOf({ tenant: 'acme', kind: 'meeting', id: String(e._id) }, SHARDS),
          [node.config.nodeId, childId].sort(),
        ) === childId
      )
        return String(e._id);
    }
    throw new Error('no meeting placed on the child');
  }

  it('stops serving the frozen owner, keeps every acknowledged notify, and the new owner wins', async () => {
    const eventId = await meetingOwnedByChild();
    const shard = shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS);
    const system = actorSystemOf(node.roles);
    const onChild = await connect(child.url, 'acme', { token: await tokenFor(node, 'acme', 'alice') });
    const onNode = await connect(node.url!, 'acme', { token: await tokenFor(node, 'acme', 'alice') });
    const bob = await connect(child.url, 'acme', { token: await tokenFor(node, 'acme', 'bob') });
    open.push(onChild, onNode, bob);
    await must(onChild, 'initEvent', { eventId });
    await must(onNode, 'initEvent', { eventId });
    await must(bob, 'joinEvent', { eventId });
    const before = (await must(onChild, 'notify', 'before', { eventId })).seq as number;
    expect(await system.leases.holder(shard)).toBe(childId);

    // A notify sent to the owner while it is frozen: the kernel holds it until the process resumes
    // with a lease that lapsed meanwhile.
    child.proc.kill('SIGSTOP');
    const racing = callLive(onChild, 'notify', 'racing', { eventId });
    const during = await untilOk(() => callLive(onNode, 'notify', 'during', { eventId }));
    const takenOver = await leaseOf(shard);
    expect(takenOver.node).toBe(node.config.nodeId);
    await pause(LEASE_MS * 2);
    child.proc.kill('SIGCONT');

    const raced = await racing;
    const read = await untilOk(() => callLive(bob, 'getMeetingDetails', { eventId }));
    expect(read.seq).toBeGreaterThanOrEqual(during.seq);
    // Resumed, the old owner no longer serves from the activation it had: the notify is ordered after
    // the one the other node acknowledged meanwhile.
    expect(raced).toMatchObject({ ok: true, data: { type: 'notify', data: { action: 'racing' } } });
    const racedSeq = (raced as { data: { seq: number } }).data.seq;
    expect(racedSeq).toBeGreaterThan(during.seq);
    const after = await untilOk(() => callLive(onChild, 'notify', 'after', { eventId }));
    expect(after.seq).toBeGreaterThan(racedSeq);
    expect(during.seq).toBeGreaterThan(before);
    // Once resumed the child is the placement's owner again: the other node hands the shard back and
    // the child claims it on the next message, under a newer epoch, never with the lease it held while
    // frozen. Every notify acknowledged on the way keeps its order.
    let lastSeq = after.seq as number;
    const final = await untilHeldBy(
      childId,
      () => leaseOf(shard),
      async () => {
        const served = await untilOk(() => callLive(onNode, 'notify', 'handback', { eventId }));
        expect(served.seq).toBeGreaterThan(lastSeq);
        lastSeq = served.seq;
      },
    );
    expect(final.epoch).toBeGreaterThan(takenOver.epoch);
    recordResult('stall', {
      finalHolder: 'resumed node, newer epoch',
      epochs: [takenOver.epoch, final.epoch],
      frozenMs: 'until the other node served + 2 leases',
      leaseMs: LEASE_MS,
      racingNotify: `acked seq ${racedSeq}`,
      duringSeq: during.seq,
      readAfterResume: read.seq,
    });
  }, 120_000);
});

/** The lease once `nodeId` holds it, sending a message (`poke`) between reads so a vacant shard is claimed. */
async function untilHeldBy(
  nodeId: string,
  read: () => Promise<{ node: string; epoch: number }>,
  poke: () => Promise<void>,
): Promise<{ node: string; epoch: number }> {
  for (let i = 0; i < 120; i++) {
    const lease = await read();
    if (lease.node === nodeId) return lease;
    await poke();
    await pause(250);
  }
  throw new Error(`${nodeId} never took its shard back`);
}

/** Retries a hub call through the transient errors of a shard changing hands. */
async function untilOk(fn: () => ReturnType<typeof callLive>): Promise<any> {
  for (let i = 0; i < 60; i++) {
    const r = await fn();
    if (r.ok) return r.data;
    if (!['not_owner', 'timeout', 'service_unavailable', 'ack_timeout'].includes(r.error.code))
      throw new Error(`${r.error.code}: ${r.error.message}`);
    await pause(250);
  }
  throw new Error('never succeeded');
}
