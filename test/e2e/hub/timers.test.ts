import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { registerHardware, tokenFor } from '../../support/auth.js';
import type { TestNode } from '../../support/node.js';
import { startHubCluster } from '../../support/cluster.js';
import { call, must, recorder } from '../../support/hub-client.js';

describe('actor timers seen through the hub (two nodes, short timers)', () => {
  let cluster: Awaited<ReturnType<typeof startHubCluster>>;
  let n: TestNode[];
  let ids: Record<string, string>;
  const on = (i: number, user: string) => cluster.on(i, user);

  beforeAll(async () => {
    const env = { HUB_RING_TIMEOUT_MS: '800', HUB_DEVICE_HEARTBEAT_MS: '300', HUB_CALL_PRESENCE_CHECK_MS: '1000' };
    cluster = await startHubCluster(
      2,
      [
        ['alice', 'clinician'],
        ['bob', 'clinician'],
        ['carol', 'clinician'],
        ['dave', 'clinician'],
        ['headset', 'device'],
      ],
      { env },
    );
    ({ nodes: n, ids } = cluster);
  });
  afterAll(async () => {
    await cluster.destroy();
  });

  it('turns an unanswered call into a missed call for caller and callee, and records it', async () => {
    const alice = await on(0, 'alice');
    const bob = await on(1, 'bob');
    const [ra, rb] = [recorder(alice), recorder(bob)];
    const info = await must(alice, 'initCall', { calleeIds: [ids.bob], callType: 'audio' });
    await rb.next('onNewCall');
    const [a, b] = await Promise.all([ra.next('onEndCall'), rb.next('onEndCall')]);
    expect(a).toMatchObject({ callId: info.callId, status: 'missed', reason: 'no answer' });
    expect(b.status).toBe('missed');
    const accept = await call(bob, 'acceptCall', { callId: info.callId });
    expect(accept).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    const rec = await n[1]!.infra.mongo.tenantDb('acme').models.CallRecord.findById(info.callId).lean();
    expect(rec?.status).toBe('missed');
  });

  it('ends an active call whose other party is gone, tells the one left, and records it', async () => {
    const carol = await on(0, 'carol');
    const dave = await on(1, 'dave');
    const rb = recorder(dave);
    const info = await must(carol, 'initCall', { calleeIds: [ids.dave], callType: 'video' });
    await rb.next('onNewCall');
    expect(await must(dave, 'acceptCall', { callId: info.callId })).toMatchObject({ status: 'active' });
    // Carol's phone is gone for good (no hang-up; her only connection): the call's presence checks find her
    // away twice.
    carol.close();
    expect(await rb.next('onEndCall', (p) => p.callId === info.callId)).toMatchObject({
      status: 'ended',
      reason: 'disconnected',
    });
    const rec = await n[1]!.infra.mongo.tenantDb('acme').models.CallRecord.findById(info.callId).lean();
    expect(rec?.status).toBe('ended');
    // Dave's connection goes on serving him: he calls Carol again.
    expect(await must(dave, 'initCall', { calleeIds: [ids.carol], callType: 'audio' })).toMatchObject({
      status: 'ringing',
    });
  });

  it('marks a headset offline after missed heartbeats and tells the meeting', async () => {
    const host = await n[0]!.services.auth.verifyAccessToken('acme', await tokenFor(n[0]!, 'acme', 'alice'));
    const now = Date.now();
    const event = await n[0]!.services.events.create(host, {
      name: 'Ward round',
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: [],
      attachments: [],
    });
    const eventId = String(event._id);
    const alice = await on(0, 'alice');
    const headset = await on(1, 'headset');
    const ra = recorder(alice);
    await must(alice, 'initEvent', { eventId });
    await registerHardware(n[0]!, 'acme', 'HS-T-1', ids.headset!);
    const info = await must(headset, 'initRapidConnect', 'HS-T-1', event.meetingCode);
    expect(info.heartbeatIntervalMs).toBe(300);
    await must(headset, 'deviceStatus', eventId, { deviceId: 'HS-T-1', batteryLevel: 50 });
    expect(await ra.next('deviceUpdated', (d) => d.status === 'offline')).toMatchObject({
      deviceId: 'HS-T-1',
      meetingId: eventId,
    });
    await must(headset, 'deviceStatus', eventId, { deviceId: 'HS-T-1', batteryLevel: 49 });
    expect(await ra.next('deviceUpdated', (d) => d.status === 'online' && d.info?.batteryLevel === 49)).toBeTruthy();
  });
});
