import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { actorSystemOf } from '../../../src/actors/runtime/index.js';
import type { ActorAddress } from '../../../src/actors/runtime/types.js';
import type { PushPublisher } from '../../../src/realtime/push-delivery.js';
import { rooms } from '../../../src/realtime/rooms.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { uniqueId } from '../../support/env.js';
import { nextEvent } from '../../support/actor-kit.js';
import { startTestNode, type TestNode } from '../../support/node.js';

/**
 * What the roles provide is given to the composition up front and resolved on use (decision 1125): no
 * setter runs after start. An HTTP-only node's REST reaches a meeting actor hosted by another node through
 * the client-only actor system its http role starts; on the hosting node (hub and actors) the actor pushes
 * through the hub's publisher, not the Redis relay the node was given for the time without a hub.
 */
describe('role links: the actor client and the hub publisher, given at construction', () => {
  const id = uniqueId();
  const shared = { MONGODB_CATALOG_DB: `rc_${id}`, MONGODB_TENANT_DB_PREFIX: `rt_${id}_`, REDIS_PREFIX: `test:${id}:` };
  const relayed: unknown[][] = [];
  const relay: PushPublisher = { emit: (...args) => void relayed.push(args) };
  let hosting: TestNode;
  let httpOnly: TestNode;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    hosting = await startTestNode({ ...shared, ROLES: 'http,hub,actors' }, { pushes: relay });
    httpOnly = await startTestNode({ ...shared, ROLES: 'http' });
    for (const [u, role] of [
      ['alice', 'clinician'],
      ['pat', 'patient'],
    ] as const) {
      ids[u] = await createUser(httpOnly, 'acme', { username: u, role });
      tokens[u] = await tokenFor(httpOnly, 'acme', u);
    }
  }, 60_000);
  afterAll(async () => {
    await httpOnly?.destroy();
    await hosting?.destroy();
  });

  it('asks through the client the http role started, and pushes through the hub on the hosting node', async () => {
    const host = await httpOnly.services.auth.verifyAccessToken('acme', tokens.alice!);
    const now = Date.now();
    const event = await httpOnly.services.events.create(host, {
      name: 'Clinic',
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: [],
      attachments: [],
      waitingRoom: true,
    });
    const eventId = String(event._id);
    const address: ActorAddress = { tenant: 'acme', kind: 'meeting', id: eventId };

    // The HTTP-only node hosts no actor: its http role's client-only system is the node's actor client.
    const client = httpOnly.roles.get('http')?.actorClient;
    expect(client).toBeDefined();
    const asked = jest.spyOn(client!, 'ask');
    const hub = hosting.roles.get('hub')!.pushPublisher!;
    const viaHub = jest.spyOn(hub, 'emit');
    const activated = nextEvent(actorSystemOf(hosting.roles).events, 'activated', (a) => a.id === eventId);

    const joined = await httpOnly.http.post(`/api/meetings/join/${event.meetingCode}`, {
      tenant: 'acme',
      token: tokens.pat,
    });
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ status: 'waiting', eventId, position: 1 });
    expect(asked).toHaveBeenCalledWith(address, expect.objectContaining({ type: 'join' }), undefined);
    expect((await activated)[0]).toEqual(address);
    // The waiting patient hears of it through the hub's publisher of the hosting node; the relay took nothing.
    expect(viaHub).toHaveBeenCalledWith(
      rooms.user('acme', ids.pat!),
      'waitingRoom',
      expect.objectContaining({ eventId, state: 'waiting', position: 1 }),
      // The turn's origin, so a repeat of the push is recorded once (decision 1133).
      expect.objectContaining({ source: `acme/meeting/${eventId}`, index: 1 }),
    );
    expect(relayed).toEqual([]);
  });
});
