import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TestNode } from '../../support/node.js';
import { startHubCluster } from '../../support/cluster.js';
import { uploadImage } from '../../support/media.js';
import { call, connectVia, HUB_TRANSPORTS, must, recorder } from '../../support/hub-client.js';
import { registerHardware } from '../../support/auth.js';

// Once per client transport: websocket only, socket.io-client's default (long-polling, then upgrade), polling only.
describe.each(HUB_TRANSPORTS)('hub across three nodes (%s)', (transport) => {
  const connect = connectVia(transport);
  let cluster: Awaited<ReturnType<typeof startHubCluster>>;
  let n: TestNode[];
  let ids: Record<string, string>;
  let tokens: Record<string, string>;
  const on = (i: number, user: string) => cluster.on(i, user);

  beforeAll(async () => {
    const users = [
      ['alice', 'clinician'],
      ['bob', 'clinician'],
      ['pat', 'patient'],
      ['carol', 'clinician'],
      ['dave', 'patient'],
      ['headset', 'device'],
    ] as const;
    cluster = await startHubCluster(3, users, { connect });
    ({ nodes: n, ids, tokens } = cluster);
  });
  afterAll(async () => {
    await cluster.destroy();
  });

  async function newEvent(participants: string[]) {
    const host = await n[0]!.services.auth.verifyAccessToken('acme', tokens.alice!);
    const now = Date.now();
    return n[0]!.services.events.create(host, {
      name: 'Consultation',
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: participants.map((u) => ({ userId: ids[u]!, role: 'participant' as const })),
      attachments: [],
    });
  }

  it('rings a callee on every device on other nodes, connects and ends the call for all parties', async () => {
    const alice = await on(0, 'alice');
    const bobPhone = await on(1, 'bob');
    const bobTablet = await on(2, 'bob');
    const [ra, rp, rt] = [recorder(alice), recorder(bobPhone), recorder(bobTablet)];
    const info = await must(alice, 'initCall', { calleeIds: [ids.bob], callType: 'video' });
    expect(info.status).toBe('ringing');
    const [p1, p2] = await Promise.all([rp.next('onNewCall'), rt.next('onNewCall')]);
    expect(p1.call.callId).toBe(info.callId);
    expect(p2.call.callerId).toBe(ids.alice);
    expect((await must(bobTablet, 'acceptCall', { callId: info.callId })).status).toBe('active');
    expect((await ra.next('onCallUpdated')).call.status).toBe('active');
    const carol = await on(0, 'carol');
    const rc = recorder(carol);
    await must(bobTablet, 'addParticipant', { callId: info.callId, userId: ids.carol });
    expect((await rc.next('onNewCall')).call.invitedIds).toContain(ids.carol);
    await must(alice, 'endCall', { callId: info.callId });
    expect(await rc.next('onEndCall')).toMatchObject({ callId: info.callId, status: 'ended', endedBy: ids.alice });
    const ends = await Promise.all([ra.next('onEndCall'), rp.next('onEndCall'), rt.next('onEndCall')]);
    expect(ends.map((e) => e.status)).toEqual(['ended', 'ended', 'ended']);
    const rec = await n[2]!.infra.mongo.tenantDb('acme').models.CallRecord.findById(info.callId).lean();
    expect(rec).toMatchObject({ status: 'ended' });
    expect(String(rec!.callerId)).toBe(ids.alice);

    const second = await must(alice, 'initCall', { calleeIds: [ids.bob] });
    await rp.next('onNewCall', (p) => p.call.callId === second.callId);
    expect((await must(alice, 'cancelCall', { callId: second.callId })).status).toBe('cancelled');
    expect(await rt.next('onEndCall', (e) => e.callId === second.callId)).toMatchObject({ status: 'cancelled' });
  });

  it('gives participants on different nodes the same meetingEvents in the same order', async () => {
    const event = await newEvent(['bob', 'pat']);
    const eventId = String(event._id);
    const alice = await on(0, 'alice');
    const bob = await on(1, 'bob');
    const pat = await on(2, 'pat');
    const rs = [recorder(alice), recorder(bob), recorder(pat)];
    const data = await must(alice, 'initEvent', { eventId });
    expect(data).toMatchObject({ eventId, role: 'host', join: { token: expect.any(String) } });
    await must(bob, 'joinEvent', { eventId });
    await must(pat, 'joinEvent', { eventId });
    for (const action of ['one', 'two', 'three', 'four'])
      await must(alice, 'notify', action, { eventId, data: { action } });
    await must(bob, 'requestHostAccess', { eventId });
    const lastSeq = (await must(pat, 'getMeetingDetails', { eventId })).seq;
    const sequences = await Promise.all(
      rs.map(async (r) => {
        await r.next('meetingEvent', (e) => e.seq === lastSeq);
        return r
          .of('meetingEvent')
          .filter((e) => e.seq >= 5)
          .map((e) => `${e.seq}:${e.type}:${e.data?.action ?? ''}`);
      }),
    );
    expect(sequences[0]).toEqual([
      '5:notify:one',
      '6:notify:two',
      '7:notify:three',
      '8:notify:four',
      '9:hostAccessRequested:',
    ]);
    expect(sequences[1]).toEqual(sequences[0]);
    expect(sequences[2]).toEqual(sequences[0]);
    expect(await call(pat, 'notify', 'x', { eventId })).toMatchObject({
      ok: false,
      error: { code: 'permission_denied' },
    });
    await must(bob, 'startRecording', { eventId });
    expect(await rs[2]!.next('meetingEvent', (e) => e.type === 'recordingStarted')).toMatchObject({ by: ids.bob });
    expect((await must(alice, 'stopRecording', { eventId })).recording.active).toBe(false);
    expect(await rs[1]!.next('meetingEvent', (e) => e.type === 'recordingStopped')).toMatchObject({ by: ids.alice });
    expect(await call(pat, 'startRecording', { eventId })).toMatchObject({
      ok: false,
      error: { code: 'permission_denied' },
    });
  });

  it('relays WebRTC signalling between members of a meeting on different nodes only', async () => {
    const event = await newEvent(['bob']);
    const eventId = String(event._id);
    const alice = await on(0, 'alice');
    const bob = await on(2, 'bob');
    const carol = await on(1, 'carol');
    const ra = recorder(alice);
    await must(alice, 'initEvent', { eventId });
    await must(bob, 'joinEvent', { eventId });
    await must(bob, 'offer', { targetUserId: ids.alice, eventId, sdp: 'v=0 offer' });
    expect(await ra.next('offer')).toMatchObject({ fromUserId: ids.bob, eventId, sdp: 'v=0 offer' });
    await must(alice, 'iceCandidate', {
      targetUserId: ids.bob,
      eventId,
      candidate: { candidate: 'candidate:1', sdpMid: '0', sdpMLineIndex: 0 },
    });
    expect(await call(carol, 'offer', { targetUserId: ids.alice, eventId, sdp: 'v=0' })).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
  });

  it('lets a meeting participant on another node control a headset, acknowledged and audited', async () => {
    const event = await newEvent(['bob']);
    const eventId = String(event._id);
    const alice = await on(0, 'alice');
    const carol = await on(1, 'carol');
    const headset = await on(2, 'headset');
    const [ra, rh] = [recorder(alice), recorder(headset)];
    await must(alice, 'initEvent', { eventId });
    await registerHardware(n[0]!, 'acme', 'HS-SERIAL-1', ids.headset!);
    const info = await must(headset, 'initRapidConnect', 'HS-SERIAL-1', event.meetingCode);
    expect(info).toMatchObject({ deviceId: 'HS-SERIAL-1', meetingId: eventId, userId: ids.headset });
    expect(await ra.next('onDeviceAdded')).toMatchObject({ deviceId: 'HS-SERIAL-1', eventId });
    await must(headset, 'deviceStatus', eventId, { deviceId: 'HS-SERIAL-1', batteryLevel: 77 });
    expect(await ra.next('deviceInfo', (d) => d.info?.batteryLevel === 77)).toMatchObject({
      deviceId: 'HS-SERIAL-1',
      status: 'online',
    });
    expect(await call(carol, 'requestRemote', eventId, 'HS-SERIAL-1')).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    await must(alice, 'requestRemote', eventId, 'HS-SERIAL-1');
    const ack = await must(alice, 'remoteControl', eventId, {
      deviceId: 'HS-SERIAL-1',
      command: 'zoomIn',
      params: { level: 2 },
    });
    expect(await rh.next('onRemoteControl', (c) => c.command === 'zoomIn')).toMatchObject({
      commandId: ack.commandId,
      from: ids.alice,
      params: { level: 2 },
    });
    await must(alice, 'startPeripheral', {
      eventId,
      deviceId: 'HS-SERIAL-1',
      peripheralId: 'steth-1',
      peripheralType: 'stethoscope',
    });
    expect(await rh.next('peripheralStarted')).toMatchObject({ peripheralId: 'steth-1', startedBy: ids.alice });
    const xray = await uploadImage(n[0]!.url!, 'acme', tokens.alice!);
    await must(alice, 'shareImage', { eventId, image: { url: xray.url } });
    expect(await rh.next('onShareImage')).toMatchObject({ eventId, by: ids.alice });
    const audit = await n[1]!.infra.mongo.tenantDb('acme').models.Audit.find({ action: 'device.remoteControl' }).lean();
    expect(audit.some((a) => a.outcome === 'success' && (a.details as any).commandId === ack.commandId)).toBe(true);

    const next = await newEvent([]);
    const nextId = String(next._id);
    await must(alice, 'initEvent', { eventId: nextId });
    await must(headset, 'addDeviceToEvent', next.meetingCode, nextId);
    expect(await ra.next('onDeviceAdded', (d) => d.eventId === nextId)).toMatchObject({ deviceId: 'HS-SERIAL-1' });
    expect(await call(alice, 'remoteControl', eventId, { deviceId: 'HS-SERIAL-1', command: 'zoomOut' })).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    });
    expect(await call(headset, 'addDeviceToEvent', 'WRONG-CODE', nextId)).toMatchObject({
      ok: false,
      error: { code: 'event_not_found' },
    });
  });

  it('pushes userStatus to the tenant across nodes on first connect and last disconnect', async () => {
    const watcher = await on(0, 'alice');
    const rw = recorder(watcher);
    const c1 = await on(1, 'dave');
    expect(await rw.next('userStatus', (s) => s.userId === ids.dave && s.online)).toMatchObject({ online: true });
    const c2 = await on(2, 'dave');
    c1.close();
    expect(await n[0]!.services.presence.isOnline('acme', ids.dave!)).toBe(true);
    c2.close();
    expect(await rw.next('userStatus', (s) => s.userId === ids.dave && !s.online)).toMatchObject({ online: false });
    expect(
      rw
        .of('userStatus')
        .filter((s) => s.userId === ids.dave)
        .map((s) => s.online),
    ).toEqual([true, false]);
  });
});
