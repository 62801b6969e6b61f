import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rendezvousOwner, shardOf } from '../../../src/actors/runtime/index.js';
import type { ChildNode } from '../../support/child-node.js';
import { startHubPair } from '../../support/cluster.js';
import type { TestNode } from '../../support/node.js';
import { must, type HubClient, type HubTransport } from '../../support/hub-client.js';
import { dropTransport, Positions } from '../../support/push-positions.js';

const SHARDS = 16;

const label = (r: { event: string; payload: any }) =>
  r.event + (r.payload?.type ? `:${r.payload.type}` : r.payload?.state ? `:${r.payload.state}` : '');

/**
 * Issue 35 section 2: a client that loses its connection while an incoming call, its admission from the
 * waiting room and meeting events are pushed receives them when it comes back (to the same node, to
 * another one, after the node that held its socket was SIGKILLed), in order and once, from its user's
 * push history in Redis. Bare socket.io clients (both transports) speaking the documented protocol:
 * positions in every recoverable push, `auth.resume` at reconnection.
 */
describe.each<HubTransport>(['websocket', 'default'])('missed pushes recovered (%s transport)', (transport) => {
  let pair: Awaited<ReturnType<typeof startHubPair>>;
  let node: TestNode;
  let child: ChildNode;
  let childId: string;
  let ids: Record<string, string>;
  let tokens: Record<string, string>;
  const sockets: HubClient[] = [];

  beforeAll(async () => {
    pair = await startHubPair(
      [
        ['alice', 'clinician'],
        ['bob', 'clinician'],
        ['pat', 'patient'],
      ] as const,
      { childName: `recover-${transport}`, shards: SHARDS },
    );
    ({ node, child, childId, ids, tokens } = pair);
  }, 90_000);
  afterAll(async () => {
    for (const s of sockets) s.close();
    await pair?.destroy();
  });

  /** An event of alice's with a waiting room whose meeting actor lives on the in-process node. */
  async function newEvent(): Promise<{ eventId: string; code: string }> {
    const host = await node.services.auth.verifyAccessToken('acme', tokens.alice!);
    const nodes = [node.config.nodeId, childId].sort();
    for (let i = 0; i < 64; i++) {
      const now = Date.now();
      const e = await node.services.events.create(host, {
        name: `Recover ${i}`,
        startAt: new Date(now).toISOString(),
        endAt: new Date(now + 3_600_000).toISOString(),
        participants: [{ userId: ids.bob!, role: 'participant' }],
        attachments: [],
        waitingRoom: true,
      });
      const eventId = String(e._id);
      if (rendezvousOwner(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS), nodes) !== childId)
        return { eventId, code: e.meetingCode };
    }
    throw new Error('no event placed on the in-process node');
  }

  async function client(url: string, user: string, positions = new Positions(tokens[user]!)) {
    const s = positions.socket(url, transport);
    sockets.push(s);
    await positions.open(s);
    return { s, positions };
  }

  /**
   * Pat (patient) waits in alice's meeting with a phone and a tablet; the phone drops; bob calls pat,
   * alice admits pat and notifies the meeting. The tablet, connected throughout, shows what the history
   * recorded (a push leaves only after it was recorded); the phone, back on `backUrl`, must get exactly that.
   */
  async function scenario(phoneUrl: string, drop: (phone: HubClient) => Promise<void>, backUrl: () => string) {
    const { eventId, code } = await newEvent();
    const alice = await client(node.url!, 'alice');
    await must(alice.s, 'initEvent', { eventId });
    const bob = await client(node.url!, 'bob');
    const phone = await client(phoneUrl, 'pat');
    const tablet = await client(node.url!, 'pat');
    const waiting = await pair.rest(node.url!, 'pat', 'POST', `/api/meetings/join/${code}`);
    expect(waiting.body).toMatchObject({ status: 'waiting', eventId });
    await phone.positions.next('waitingRoom', (p) => p.state === 'waiting');
    await tablet.positions.next('waitingRoom', (p) => p.state === 'waiting');
    const before = phone.positions.last.get(`u:${ids.pat}`)!;
    expect(before.seq).toBeGreaterThan(0);

    await drop(phone.s);
    const mark = tablet.positions.received.length;
    const call = await must(bob.s, 'initCall', { calleeIds: [ids.pat], callType: 'video' });
    await tablet.positions.next('onNewCall', (p) => p.call.callId === call.callId, mark);
    await must(alice.s, 'admit', { eventId, userId: ids.pat });
    await tablet.positions.next('waitingRoom', (p) => p.state === 'admitted', mark);
    await must(alice.s, 'notify', 'while-away', { eventId, data: { n: 1 } });
    await tablet.positions.next('meetingEvent', (p) => p.type === 'notify', mark);
    const missed = tablet.positions.received
      .slice(mark)
      .filter((r) => r.payload?.pos)
      .map((r) => ({ event: label(r), seq: r.payload.pos.seq, epoch: r.payload.pos.epoch }));
    // The admission turn moves pat into the meeting, announces it, then tells pat (meeting-waiting.ts).
    expect(missed.map((m) => m.event)).toEqual([
      'onNewCall',
      'meetingEvent:participantAdmitted',
      'meetingEvent:participantJoined',
      'waitingRoom:admitted',
      'meetingEvent:notify',
    ]);
    expect(missed.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5].map((n) => before.seq + n));
    expect(new Set(missed.map((m) => m.epoch))).toEqual(new Set([before.epoch]));

    // Back, with the same positions: the missed pushes, in order, before anything new.
    const again = phone.positions.socket(backUrl(), transport);
    sockets.push(again);
    const from = phone.positions.received.length;
    await phone.positions.open(again);
    await phone.positions.next('meetingEvent', (p) => p.type === 'notify' && p.data?.action === 'while-away', from);
    await must(alice.s, 'notify', 'after', { eventId });
    await phone.positions.next('meetingEvent', (p) => p.data?.action === 'after', from);
    const got = phone.positions.received
      .slice(from)
      .filter((r) => r.payload?.pos)
      .map((r) => ({ event: label(r), seq: r.payload.pos.seq, epoch: r.payload.pos.epoch }));
    expect(got).toEqual([...missed, { event: 'meetingEvent:notify', seq: before.seq + 6, epoch: before.epoch }]);
    expect(phone.positions.received.slice(from).filter((r) => r.event === 'resyncRequired')).toEqual([]);
    const replayedAdmission = phone.positions.received
      .slice(from)
      .find((r) => r.event === 'waitingRoom' && r.payload.state === 'admitted')!;
    expect(replayedAdmission.payload.meeting).toBeDefined();
    // Pat's sockets are logically in the meeting: the phone got `after` live without joining again.
  }

  it('a dropped transport comes back to the same node', async () => {
    await scenario(node.url!, dropTransport, () => node.url!);
  });

  it('a dropped transport comes back on another node', async () => {
    await scenario(child.url, dropTransport, () => node.url!);
  });

  it('the node that held the socket is SIGKILLed: the client carries on on the other node', async () => {
    await scenario(
      child.url,
      async (phone) => {
        const gone = new Promise((r) => phone.once('disconnect', r));
        await child.kill();
        await gone;
      },
      () => node.url!,
    );
  });
});
