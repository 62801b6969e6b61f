import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestNode } from '../../support/node.js';
import { startHubCluster } from '../../support/cluster.js';
import { uploadImage } from '../../support/media.js';
import { call, must, recorder } from '../../support/hub-client.js';
import { registerHardware } from '../../support/auth.js';

/**
 * Methods and pushes whose only test used to be an acknowledgement: WebRTC `answer` and `iceCandidate`
 * relayed to the peer, `stopPeripheral` with its `peripheralStopped` push, and `clearImage`. Every
 * client is a real socket; sender and receiver sit on different nodes, so each push crosses nodes.
 */
describe('hub relays and stops across two nodes', () => {
  let cluster: Awaited<ReturnType<typeof startHubCluster>>;
  let n: TestNode[];
  let ids: Record<string, string>;
  let tokens: Record<string, string>;
  const on = (i: number, user: string) => cluster.on(i, user);

  beforeAll(async () => {
    cluster = await startHubCluster(2, [
      ['alice', 'clinician'],
      ['bob', 'clinician'],
      ['carol', 'clinician'],
      ['headset', 'device'],
    ]);
    ({ nodes: n, ids, tokens } = cluster);
  });
  afterAll(async () => {
    await cluster.destroy();
  });

  /** A started meeting hosted by alice (on node 0) that bob (on node 1) joined. */
  async function meeting() {
    const host = await n[0]!.services.auth.verifyAccessToken('acme', tokens.alice!);
    const now = Date.now();
    const event = await n[0]!.services.events.create(host, {
      name: 'Consultation',
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: [{ userId: ids.bob!, role: 'participant' as const }],
      attachments: [],
    });
    const eventId = String(event._id);
    const alice = await on(0, 'alice');
    const bob = await on(1, 'bob');
    await must(alice, 'initEvent', { eventId });
    await must(bob, 'joinEvent', { eventId });
    return { event, eventId, alice, bob };
  }

  it('names each member by their role in the meeting (host, participant), not their tenant role', async () => {
    const { eventId, bob } = await meeting();
    const details = await must(bob, 'getMeetingDetails', { eventId });
    const roles = Object.fromEntries(details.members.map((m: { userId: string; role: string }) => [m.userId, m.role]));
    expect(roles).toEqual({ [ids.alice!]: 'host', [ids.bob!]: 'participant' });
  });

  it('relays an answer to the peer on the other node, from the sender, and to no one else', async () => {
    const { eventId, alice, bob } = await meeting();
    const carol = await on(1, 'carol');
    const [ra, rb, rc] = [recorder(alice), recorder(bob), recorder(carol)];
    await must(bob, 'offer', { targetUserId: ids.alice, eventId, sdp: 'v=0 offer-from-bob' });
    expect(await ra.next('offer')).toEqual({ fromUserId: ids.bob, eventId, sdp: 'v=0 offer-from-bob' });
    await must(alice, 'answer', { targetUserId: ids.bob, eventId, sdp: 'v=0 answer-from-alice' });
    expect(await rb.next('answer')).toEqual({ fromUserId: ids.alice, eventId, sdp: 'v=0 answer-from-alice' });
    expect(await call(carol, 'answer', { targetUserId: ids.alice, eventId, sdp: 'v=0' })).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    // A later push to alice arrives after any stray answer would have: she received none.
    await must(bob, 'offer', { targetUserId: ids.alice, eventId, sdp: 'v=0 second' });
    await ra.next('offer', (p) => p.sdp === 'v=0 second');
    expect({ alice: ra.of('answer'), bob: rb.of('answer'), carol: rc.of('answer') }).toEqual({
      alice: [],
      bob: [{ fromUserId: ids.alice, eventId, sdp: 'v=0 answer-from-alice' }],
      carol: [],
    });
  });

  it('delivers ICE candidates both ways across nodes with every field intact', async () => {
    const { eventId, alice, bob } = await meeting();
    const [ra, rb] = [recorder(alice), recorder(bob)];
    const fromAlice = {
      candidate: 'candidate:1 1 udp 2122260223 10.0.0.1 50000 typ host',
      sdpMid: '0',
      sdpMLineIndex: 0,
    };
    const fromBob = {
      candidate: 'candidate:2 1 udp 1686052607 198.51.100.7 40000 typ srflx',
      sdpMid: null,
      sdpMLineIndex: 1,
    };
    await must(alice, 'iceCandidate', { targetUserId: ids.bob, eventId, candidate: fromAlice });
    await must(bob, 'iceCandidate', { targetUserId: ids.alice, eventId, candidate: fromBob });
    expect(await rb.next('iceCandidate')).toEqual({ fromUserId: ids.alice, eventId, candidate: fromAlice });
    expect(await ra.next('iceCandidate')).toEqual({ fromUserId: ids.bob, eventId, candidate: fromBob });
  });

  it('stops a running peripheral: the headset and the meeting hear peripheralStopped, a second stop is refused', async () => {
    const { event, eventId, alice, bob } = await meeting();
    const headset = await on(1, 'headset');
    const [rb, rh] = [recorder(bob), recorder(headset)];
    await registerHardware(n[0]!, 'acme', 'HS-STOP-1', ids.headset!);
    await must(headset, 'initRapidConnect', 'HS-STOP-1', event.meetingCode);
    await must(alice, 'startPeripheral', {
      eventId,
      deviceId: 'HS-STOP-1',
      peripheralId: 'otoscope-1',
      peripheralType: 'otoscope',
    });
    expect(await rh.next('peripheralStarted')).toMatchObject({
      deviceId: 'HS-STOP-1',
      peripheralId: 'otoscope-1',
      startedBy: ids.alice,
    });
    const carol = await on(0, 'carol');
    expect(
      await call(carol, 'stopPeripheral', { eventId, deviceId: 'HS-STOP-1', peripheralId: 'otoscope-1' }),
    ).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    const stopped = await must(alice, 'stopPeripheral', { eventId, deviceId: 'HS-STOP-1', peripheralId: 'otoscope-1' });
    expect(stopped.peripherals).toEqual({});
    const pushed = {
      deviceId: 'HS-STOP-1',
      eventId,
      peripheralId: 'otoscope-1',
      stoppedBy: ids.alice,
      stoppedAt: expect.any(String),
    };
    // Recoverable pushes carry each recipient's own position (decision 1000): the headset's stream, bob's.
    expect(await rh.next('peripheralStopped')).toEqual({
      ...pushed,
      pos: expect.objectContaining({ stream: 'd:HS-STOP-1' }),
    });
    expect(await rb.next('peripheralStopped')).toEqual({
      ...pushed,
      pos: expect.objectContaining({ stream: `u:${ids.bob}` }),
    });
    expect(
      await call(alice, 'stopPeripheral', { eventId, deviceId: 'HS-STOP-1', peripheralId: 'otoscope-1' }),
    ).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
  });

  it("clears the shared image on the meeting's headsets on the other node, and only members may", async () => {
    const { event, eventId, alice } = await meeting();
    const headset = await on(1, 'headset');
    const rh = recorder(headset);
    await registerHardware(n[0]!, 'acme', 'HS-CLEAR-1', ids.headset!);
    await must(headset, 'initRapidConnect', 'HS-CLEAR-1', event.meetingCode);
    const scan = await uploadImage(n[0]!.url!, 'acme', tokens.alice!);
    await must(alice, 'shareImage', { eventId, image: { url: scan.url } });
    expect(await rh.next('onShareImage')).toMatchObject({ eventId, by: ids.alice });
    const carol = await on(0, 'carol');
    expect(await call(carol, 'clearImage', { eventId })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    await must(alice, 'clearImage', { eventId });
    expect(await rh.next('onClearImage')).toEqual({
      eventId,
      by: ids.alice,
      pos: expect.objectContaining({ seq: expect.any(Number) }),
    });
    expect(rh.of('onClearImage')).toHaveLength(1);
    expect((await must(alice, 'getMeetingDetails', { eventId })).sharedImage).toBeUndefined();
  });
});
