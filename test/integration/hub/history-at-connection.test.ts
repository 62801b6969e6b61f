import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { must, type HubClient } from '../../support/hub-client.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { dropTransport, Positions } from '../../support/push-positions.js';
import { PushHistoryStore } from '../../../src/data/stores/push-history.store.js';
import { CONNECT_READS } from '../../../src/hub/hub.resume.js';

/**
 * A connection whose push stream cannot be read when it arrives (Redis slow or failing for a moment) is
 * not joined without its position: the read is tried again, and after the last failure the transport is
 * closed so the client comes back and hands its position over again. Before, it was joined without the
 * replay, and an invite sent while the phone was away was lost to it without a word.
 */
describe('push history read at connection', () => {
  let node: TestNode;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const open: HubClient[] = [];
  const realRead = PushHistoryStore.prototype.read;
  /** Reads of the stream to fail from now on (the next ones of any connection). */
  let failing = 0;

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    for (const [username, role] of [
      ['alice', 'clinician'],
      ['bob', 'patient'],
    ] as const) {
      ids[username] = await createUser(node, 'acme', { username, role });
      tokens[username] = await tokenFor(node, 'acme', username);
    }
    PushHistoryStore.prototype.read = async function (this: PushHistoryStore, ...args) {
      if (failing > 0) {
        failing--;
        throw new Error('Command timed out');
      }
      return realRead.apply(this, args);
    };
  });
  afterAll(async () => {
    PushHistoryStore.prototype.read = realRead;
    for (const s of open) s.close();
    await node.destroy();
  });

  /** Bob's phone connected, then away while alice calls him: resolves with his positions and the call's id. */
  async function missedCall(): Promise<{ phone: Positions; callId: string }> {
    const alice = new Positions(tokens.alice!);
    const a = await alice.open(track(alice.socket(node.url!, 'websocket')));
    const phone = new Positions(tokens.bob!);
    await dropTransport(await phone.open(track(phone.socket(node.url!, 'websocket'))));
    const call = await must<{ callId: string }>(a, 'initCall', { calleeIds: [ids.bob], callType: 'video' });
    return { phone, callId: call.callId };
  }
  const track = (s: HubClient) => (open.push(s), s);

  it('tries a failed read again and replays what the client missed', async () => {
    const { phone, callId } = await missedCall();
    failing = CONNECT_READS - 1;
    const from = phone.received.length;
    const back = await phone.open(track(phone.socket(node.url!, 'websocket')));
    expect((await phone.next('onNewCall', (p) => p.call?.callId === callId, from)).pos).toBeDefined();
    expect(back.connected).toBe(true);
    expect(failing).toBe(0);
  });

  it('closes the transport when every read failed; the client comes back and gets what it missed', async () => {
    const { phone, callId } = await missedCall();
    failing = CONNECT_READS;
    const refused = track(phone.socket(node.url!, 'websocket'));
    const reason = new Promise<string>((r) => refused.once('disconnect', r));
    refused.connect();
    // A transport close, which socket.io clients reconnect after (not `io server disconnect`, which is final).
    expect(await reason).toBe('transport close');
    expect(phone.received.filter((r) => r.event === 'onNewCall' && r.payload.call?.callId === callId)).toEqual([]);
    const from = phone.received.length;
    await phone.open(track(phone.socket(node.url!, 'websocket')));
    expect((await phone.next('onNewCall', (p) => p.call?.callId === callId, from)).pos).toBeDefined();
  });

  it('a push recorded while the handshake is under way reaches the connection once, in order', async () => {
    // The stream's first read begins with the handshake's presence step (startFirstRead): a push recorded
    // between that read and the socket's rooms must come by the replay, once.
    const alice = new Positions(tokens.alice!);
    const a = await alice.open(track(alice.socket(node.url!, 'websocket')));
    const phone = new Positions(tokens.bob!);
    await dropTransport(await phone.open(track(phone.socket(node.url!, 'websocket'))));
    const presence = node.services.presence;
    const connected = presence.connected.bind(presence);
    let arrived!: () => void;
    let release!: () => void;
    const held = new Promise<void>((r) => (arrived = r));
    const gate = new Promise<void>((r) => (release = r));
    presence.connected = async (...args: Parameters<typeof connected>) => {
      if (args[1] === ids.bob) {
        arrived();
        await gate;
      }
      return connected(...args);
    };
    try {
      const from = phone.received.length;
      const back = phone.open(track(phone.socket(node.url!, 'websocket')));
      await held;
      const first = await must<{ callId: string }>(a, 'initCall', { calleeIds: [ids.bob], callType: 'video' });
      release();
      await back;
      await phone.next('onNewCall', (p) => p.call?.callId === first.callId, from);
      // A later push arrives live after it: by then a second copy of the first would have come too.
      const second = await must<{ callId: string }>(a, 'initCall', { calleeIds: [ids.bob], callType: 'audio' });
      await phone.next('onNewCall', (p) => p.call?.callId === second.callId, from);
      const calls = phone.received
        .slice(from)
        .filter((r) => r.event === 'onNewCall')
        .map((r) => r.payload.call.callId);
      expect(calls).toEqual([first.callId, second.callId]);
    } finally {
      presence.connected = connected;
      release();
    }
  });
});
