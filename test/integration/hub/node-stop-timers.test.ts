import { describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { call, connect, type HubClient } from '../../support/hub-client.js';
import { startTestNode } from '../../support/node.js';
import { timerNotes } from '../../support/timer-notes.js';

/**
 * A hub node's destroy leaves no timer armed, with calls in flight when it stops: each `initCall`
 * makes a call actor with a ring timer, and the node stops while more are on their way (the hub fuzz's
 * node stopped like this and left 11 timers on a loaded machine).
 */
describe('hub node stop: no timer outlives the node', () => {
  it('leaves nothing armed after a destroy during a burst of calls', async () => {
    const notes = timerNotes();
    const sockets: HubClient[] = [];
    try {
      const node = await startTestNode({ ROLES: 'http,hub,actors', ACTOR_LEASE_MS: '1500' });
      const ids: Record<string, string> = {};
      for (const u of ['alice', 'bob', 'carol'])
        ids[u] = await createUser(node, 'acme', { username: u, role: 'clinician' });
      const alice = await connect(node.url!, 'acme', { token: await tokenFor(node, 'acme', 'alice') });
      sockets.push(alice);
      // Ring timers armed and settled, then a burst still in flight when the node stops.
      for (let i = 0; i < 5; i++) {
        const r = await call(alice, 'initCall', { calleeIds: [ids.bob, ids.carol], callType: 'audio' });
        expect(r.ok).toBe(true);
      }
      const burst = Array.from({ length: 20 }, () =>
        call(alice, 'initCall', { calleeIds: [ids.bob], callType: 'audio' }).catch(() => undefined),
      );
      await node.destroy();
      alice.close();
      await Promise.all(burst);
      // Closes under way get a moment; a ring timer would wait out its minute.
      expect(await notes.settled(3_000)).toEqual([]);
    } finally {
      for (const s of sockets) s.close();
      notes.stop();
    }
  }, 60_000);
});
