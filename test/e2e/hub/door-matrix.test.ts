import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, registerHardware, tokenFor } from '../../support/auth.js';
import { request } from '../../support/http.js';
import { uploadImage } from '../../support/media.js';
import { call, connect, must, recorder, type HubClient } from '../../support/hub-client.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { uniqueId } from '../../support/env.js';
import { actorSystemOf } from '../../../src/actors/runtime/index.js';
import { TelemetryClient, conferenceScript } from '../../../src/vcs/telemetry.client.js';
import type { TelemetryRoleHandle } from '../../../src/telemetry/telemetry.role.js';

type Rec = ReturnType<typeof recorder>;
type Entrance = 'hub' | 'rest' | 'graphql';
type JoinDoor = 'hub joinEvent' | 'REST join by code' | 'hub initRapidConnect' | 'hub addDeviceToEvent';

/** A coded refusal, whatever the entrance: the hub's nack code, the problem's code, the GraphQL extension code. */
interface Answer {
  ok: boolean;
  code?: string;
  data?: any;
}

/**
 * One door per room (decision 1010): every change of a meeting's membership, admission, lock, recording
 * and host state, driven through every entrance that can cause it, meets the same checks, sends the
 * same pushes and writes the same audit entries. The meeting actor is the only writer; a headset is a
 * member that is held, admitted, denied, removed and barred like a person.
 */
describe('one door per room: every meeting change through every entrance', () => {
  let node: TestNode;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  let sockets: HubClient[] = [];
  let seq = 0;
  // The cluster's databases and Redis prefix: the telemetry cases add a workers and telemetry node to it.
  const id = uniqueId();
  const shared = {
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    REDIS_PREFIX: `test:${id}:`,
    JOBS_BACKOFF_MS: '50',
  };

  beforeAll(async () => {
    node = await startTestNode({ ...shared, ROLES: 'http,hub,actors' });
    for (const [username, role] of [
      ['alice', 'clinician'],
      ['bob', 'clinician'],
      ['cory', 'clinician'],
      ['pat', 'patient'],
      ['hs', 'device'],
    ] as const) {
      ids[username] = await createUser(node, 'acme', {
        username,
        role,
        ...(role === 'device' ? { kind: 'device' as const } : {}),
      });
      tokens[username] = await tokenFor(node, 'acme', username);
    }
    // Invited patients wait too: the waiting room holds everyone it may hold.
    const { db } = await node.services.tenants.require('acme');
    await db.models.TenantConfig.updateOne(
      { _id: 'tenant' },
      { $set: { 'meetings.waitingRoomAutoAdmitInvited': false } },
    ).exec();
    // Written behind the settings service: this node's cached settings are dropped as the service would.
    node.services.admin.forget('acme');
  }, 60_000);
  afterAll(async () => {
    for (const s of sockets) s.close();
    await node?.destroy();
  });

  /** Each case closes its sockets: a headset's user room must not carry an earlier case's socket into this one. */
  async function fresh<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } finally {
      for (const s of sockets) s.close();
      sockets = [];
    }
  }

  async function hub(user: string): Promise<{ s: HubClient; r: Rec }> {
    const s = await connect(node.url!, 'acme', { token: tokens[user] });
    sockets.push(s);
    return { s, r: recorder(s) };
  }
  const rest = (user: string, method: string, path: string, body?: unknown) =>
    request(node.url!, method, path, { tenant: 'acme', token: tokens[user], ...(body ? { body } : {}) });
  const gql = (user: string, query: string) => rest(user, 'POST', '/graphql', { query });

  async function hubAnswer(s: HubClient, method: string, ...args: unknown[]): Promise<Answer> {
    const r = await call(s, method as never, ...args);
    return r.ok ? { ok: true, data: r.data } : { ok: false, code: r.error.code };
  }
  async function restAnswer(user: string, method: string, path: string, body?: unknown): Promise<Answer> {
    const r = await rest(user, method, path, body);
    return r.status < 300 ? { ok: true, data: r.body } : { ok: false, code: r.body.code };
  }
  async function gqlAnswer(user: string, query: string, field: string): Promise<Answer> {
    const r = await gql(user, query);
    if (r.body.errors?.length) return { ok: false, code: r.body.errors[0].extensions.code };
    return { ok: true, data: r.body.data[field] };
  }

  /** An event of alice's, bob, cory and pat invited, with or without a waiting room; alice's socket has started it. */
  async function meeting(waitingRoom: boolean) {
    const host = await node.services.auth.verifyAccessToken('acme', tokens.alice!);
    const now = Date.now();
    const e = await node.services.events.create(host, {
      name: `Door ${++seq}`,
      startAt: new Date(now).toISOString(),
      endAt: new Date(now + 3_600_000).toISOString(),
      participants: ['bob', 'cory', 'pat'].map((u) => ({ userId: ids[u]!, role: 'participant' as const })),
      attachments: [],
      waitingRoom,
    });
    const eventId = String(e._id);
    const { s: alice, r: ra } = await hub('alice');
    await must(alice, 'initEvent', { eventId });
    return { eventId, code: e.meetingCode, alice, ra };
  }
  type Meeting = Awaited<ReturnType<typeof meeting>>;

  const details = (m: Meeting) => must(m.alice, 'getMeetingDetails', { eventId: m.eventId });
  const audits = async (action: string, eventId: string) =>
    (await node.services.auth.audit.list('acme', { action, eventId })).map((a) => ({
      action: a.action,
      outcome: a.outcome,
      actorId: a.actorId ? String(a.actorId) : undefined,
      subjectId: a.subjectId ? String(a.subjectId) : undefined,
      eventId: a.eventId,
    }));
  const entry = (action: string, eventId: string, actor: string, subject?: string) => ({
    action,
    outcome: 'success',
    actorId: ids[actor],
    subjectId: subject ? ids[subject] : undefined,
    eventId,
  });

  /** Who joins through a door: a patient for the person doors, the headset account for the device doors. */
  const joinerOf = (door: JoinDoor) => (door.includes('Device') || door.includes('Rapid') ? 'hs' : 'pat');
  const isDevice = (door: JoinDoor) => joinerOf(door) === 'hs';

  /**
   * Joins `m` through `door`; the joiner's socket (open before the join, so it gets its user pushes) and
   * the answer. A headset entering by addDeviceToEvent first connected into another meeting by rapid connect.
   */
  async function join(door: JoinDoor, m: Meeting) {
    const who = joinerOf(door);
    const { s, r } = await hub(who);
    const hardwareId = `HS-DOOR-${++seq}`;
    // An administrator registered the headset's hardware id to its device account (decision 1041).
    if (who === 'hs') await registerHardware(node, 'acme', hardwareId, ids.hs!);
    let answer: Answer;
    switch (door) {
      case 'hub joinEvent':
        answer = await hubAnswer(s, 'joinEvent', { eventId: m.eventId });
        break;
      case 'REST join by code':
        answer = await restAnswer(who, 'POST', `/api/meetings/join/${m.code}`);
        break;
      case 'hub initRapidConnect':
        answer = await hubAnswer(s, 'initRapidConnect', hardwareId, m.code);
        break;
      case 'hub addDeviceToEvent': {
        const side = await meeting(false);
        await must(s, 'initRapidConnect', hardwareId, side.code);
        answer = await hubAnswer(s, 'addDeviceToEvent', m.code, m.eventId);
        break;
      }
    }
    return { who, s, r, answer, hardwareId };
  }
  type Joined = Awaited<ReturnType<typeof join>>;

  /** The joiner heard nothing of the meeting: a notify the host sends reaches the host, not them. */
  async function outOfRoom(m: Meeting, j: Joined) {
    const tag = `probe-${++seq}`;
    await must(m.alice, 'notify', tag, { eventId: m.eventId });
    await m.ra.next('meetingEvent', (e) => e.data?.action === tag);
    await call(j.s, 'getMeetingDetails', { eventId: m.eventId });
    expect(j.r.of('meetingEvent').filter((e: { eventId: string }) => e.eventId === m.eventId)).toEqual([]);
  }

  /** The joiner is a member of the meeting, a headset with its device listed. */
  async function isMember(m: Meeting, j: Joined) {
    const d = await details(m);
    expect(d.members).toContainEqual(
      expect.objectContaining({ userId: ids[j.who], role: j.who === 'hs' ? 'device' : 'participant' }),
    );
    if (j.who === 'hs') expect(d.deviceIds).toContain(j.hardwareId);
  }
  async function notMember(m: Meeting, j: Joined) {
    const d = await details(m);
    expect(d.members.map((x: { userId: string }) => x.userId)).not.toContain(ids[j.who]);
    expect(d.deviceIds).not.toContain(j.hardwareId);
  }

  /** The joiner waits: no join details, in the host's queue, the host told; nothing of the meeting reaches them. */
  async function waits(m: Meeting, j: Joined, returning?: { why: 'denied' | 'removed'; afterSeq: number }) {
    expect(j.answer).toMatchObject({ ok: true, data: { status: 'waiting', eventId: m.eventId } });
    expect(JSON.stringify(j.answer.data)).not.toContain('"token"');
    const mine = (w: { userId: string; returning?: string }) =>
      w.userId === ids[j.who] && w.returning === returning?.why;
    const queue = await m.ra.next('waitingRoomUpdated', (p) => p.waiting.some(mine));
    expect(queue.waiting.find(mine)).toMatchObject({ kind: j.who === 'hs' ? 'device' : 'person' });
    await m.ra.next(
      'meetingEvent',
      (e) => e.type === 'participantWaiting' && e.data?.userId === ids[j.who] && e.seq > (returning?.afterSeq ?? 0),
    );
    await notMember(m, j);
    await outOfRoom(m, j);
  }

  /** The joiner is in at once: join details, a member, the host told. */
  async function entered(m: Meeting, j: Joined) {
    expect(j.answer.ok).toBe(true);
    expect(JSON.stringify(j.answer.data)).toContain('"token"');
    await isMember(m, j);
    await m.ra.next('meetingEvent', (e) => e.type === 'participantJoined' && e.data?.userId === ids[j.who]);
  }

  /** Waits and is then admitted by the hub: the admission push with join details, a member. */
  async function admittedBy(m: Meeting, j: Joined, admit: () => Promise<Answer>) {
    const r = await admit();
    expect(r).toMatchObject({ ok: true, data: { admitted: [ids[j.who]] } });
    const pushed = await j.r.next('waitingRoom', (p) => p.eventId === m.eventId && p.state === 'admitted');
    expect(JSON.stringify(pushed.meeting)).toContain('"token"');
    await m.ra.next('meetingEvent', (e) => e.type === 'participantAdmitted' && e.data?.userId === ids[j.who]);
    await isMember(m, j);
    expect(await audits('meeting.admit', m.eventId)).toEqual([entry('meeting.admit', m.eventId, 'alice', j.who)]);
    expect(await audits('meeting.join', m.eventId)).toContainEqual(entry('meeting.join', m.eventId, j.who, j.who));
  }

  const JOIN_DOORS: JoinDoor[] = ['hub joinEvent', 'REST join by code', 'hub initRapidConnect', 'hub addDeviceToEvent'];
  const ENTRANCES: Entrance[] = ['hub', 'rest', 'graphql'];
  const TARGET_DOORS: JoinDoor[] = ['hub joinEvent', 'hub initRapidConnect'];

  /** A host change through one entrance: the hub method, the REST route, the GraphQL mutation. */
  function control(
    via: Entrance,
    m: Meeting,
    name: 'admit' | 'deny' | 'removeParticipant' | 'lockMeeting' | 'endMeeting' | 'transferHost',
    userId?: string,
  ): Promise<Answer> {
    const verb = {
      admit: 'admit',
      deny: 'deny',
      removeParticipant: 'remove',
      lockMeeting: 'lock',
      endMeeting: 'end',
      transferHost: 'transferHost',
    }[name];
    const fields = {
      admit: 'admitted',
      deny: 'denied',
      removeParticipant: 'affected',
      lockMeeting: 'locked affected',
      endMeeting: 'ended affected',
      transferHost: 'hosts affected',
    }[name];
    const who = userId ? { userId } : {};
    if (via === 'hub') return hubAnswer(m.alice, name, { eventId: m.eventId, ...who });
    if (via === 'rest') return restAnswer('alice', 'POST', `/api/meetings/${m.eventId}/${verb}`, who);
    const args = [`eventId: "${m.eventId}"`, ...(userId ? [`userId: "${userId}"`] : [])].join(', ');
    return gqlAnswer('alice', `mutation { ${name}(${args}) { ${fields} } }`, name);
  }

  describe('join: a patient and a headset wait alike while a waiting room holds them', () => {
    for (const door of JOIN_DOORS)
      it(`${door}: waits, hears nothing of the meeting, then is admitted with its own join details`, () =>
        fresh(async () => {
          const m = await meeting(true);
          const j = await join(door, m);
          await waits(m, j);
          expect(await audits('meeting.join', m.eventId)).not.toContainEqual(
            expect.objectContaining({ subjectId: ids[j.who] }),
          );
          await admittedBy(m, j, () => control('hub', m, 'admit', ids[j.who]));
          if (isDevice(door)) {
            await m.ra.next('meetingEvent', (e) => e.type === 'deviceAdded' && e.data?.deviceId === j.hardwareId);
            // Only the tenant's own media reaches a headset (decision 1040): alice shares an image she uploaded.
            const image = await uploadImage(node.url!, 'acme', tokens.alice!);
            await must(m.alice, 'shareImage', { eventId: m.eventId, image: { url: image.url } });
            expect(await j.r.next('onShareImage', (p) => p.eventId === m.eventId)).toMatchObject({ by: ids.alice });
          }
        }));

    for (const door of JOIN_DOORS)
      it(`${door}: enters at once without a waiting room, a member with the same pushes and audit`, () =>
        fresh(async () => {
          const m = await meeting(false);
          const j = await join(door, m);
          await entered(m, j);
          expect(await audits('meeting.join', m.eventId)).toContainEqual(
            entry('meeting.join', m.eventId, j.who, j.who),
          );
        }));
  });

  describe('lock: no join door lets a newcomer in', () => {
    for (const via of ENTRANCES)
      it(`lock by ${via}: every join door answers meeting_locked`, () =>
        fresh(async () => {
          const m = await meeting(false);
          expect(await control(via, m, 'lockMeeting')).toMatchObject({ ok: true, data: { locked: true } });
          await m.ra.next('meetingEvent', (e) => e.type === 'meetingLocked');
          expect(await audits('meeting.lock', m.eventId)).toEqual([entry('meeting.lock', m.eventId, 'alice')]);
          for (const door of JOIN_DOORS) {
            const j = await join(door, m);
            expect({ door, answer: j.answer }).toEqual({ door, answer: { ok: false, code: 'meeting_locked' } });
            await notMember(m, j);
          }
        }));
  });

  describe('admit, deny, remove: a headset is treated as a person', () => {
    for (const via of ENTRANCES)
      for (const door of TARGET_DOORS) {
        it(`admit by ${via}, joined by ${door}`, () =>
          fresh(async () => {
            const m = await meeting(true);
            const j = await join(door, m);
            await waits(m, j);
            await admittedBy(m, j, () => control(via, m, 'admit', ids[j.who]));
          }));

        it(`deny by ${via}, joined by ${door}: told, barred, back only through the queue`, () =>
          fresh(async () => {
            const m = await meeting(true);
            const j = await join(door, m);
            await waits(m, j);
            expect(await control(via, m, 'deny', ids[j.who])).toMatchObject({
              ok: true,
              data: { denied: [ids[j.who]] },
            });
            await j.r.next('waitingRoom', (p) => p.eventId === m.eventId && p.state === 'denied');
            await m.ra.next('meetingEvent', (e) => e.type === 'participantDenied' && e.data?.userId === ids[j.who]);
            expect(await audits('meeting.deny', m.eventId)).toEqual([entry('meeting.deny', m.eventId, 'alice', j.who)]);
            await notMember(m, j);
            const afterSeq = (await details(m)).seq;
            const again = await join(door, m);
            await waits(m, again, { why: 'denied', afterSeq });
          }));

        it(`remove by ${via}, joined by ${door}: out of the meeting, barred, back only through the queue`, () =>
          fresh(async () => {
            const m = await meeting(false);
            const j = await join(door, m);
            await entered(m, j);
            const removed = await control(via, m, 'removeParticipant', ids[j.who]);
            expect(removed).toMatchObject({ ok: true, data: { affected: [ids[j.who]] } });
            await j.r.next('removedFromMeeting', (p) => p.eventId === m.eventId);
            await m.ra.next('meetingEvent', (e) => e.type === 'participantRemoved' && e.data?.userId === ids[j.who]);
            expect(await audits('meeting.remove_participant', m.eventId)).toEqual([
              entry('meeting.remove_participant', m.eventId, 'alice', j.who),
            ]);
            await notMember(m, j);
            const afterSeq = (await details(m)).seq;
            const again = await join(door, m);
            await waits(m, again, { why: 'removed', afterSeq });
          }));
      }
  });

  describe('end and host transfer', () => {
    for (const via of ENTRANCES) {
      it(`end by ${via}: everyone out, the recording stopped, the event ended`, () =>
        fresh(async () => {
          const m = await meeting(false);
          const { s: b, r: rb } = await hub('bob');
          await must(b, 'joinEvent', { eventId: m.eventId });
          await must(m.alice, 'startRecording', { eventId: m.eventId });
          expect(await control(via, m, 'endMeeting')).toMatchObject({ ok: true, data: { ended: true } });
          await rb.next('meetingEvent', (e) => e.eventId === m.eventId && e.type === 'recordingStopped');
          await rb.next('meetingEvent', (e) => e.eventId === m.eventId && e.type === 'meetingEnded');
          expect((await node.services.recording.status('acme', m.eventId)).state).toBe('stopping');
          expect(await audits('meeting.end', m.eventId)).toEqual([entry('meeting.end', m.eventId, 'alice')]);
          expect(await audits('recording.stop', m.eventId)).toEqual([
            entry('recording.stop', m.eventId, 'alice', 'alice'),
          ]);
        }));

      it(`transferHost by ${via}: the new host controls, the old one does not`, () =>
        fresh(async () => {
          const m = await meeting(false);
          const { s: b } = await hub('bob');
          await must(b, 'joinEvent', { eventId: m.eventId });
          expect(await control(via, m, 'transferHost', ids.bob)).toMatchObject({
            ok: true,
            data: { hosts: [ids.bob] },
          });
          await m.ra.next('meetingEvent', (e) => e.type === 'hostTransferred' && e.data?.to === ids.bob);
          expect(await audits('meeting.transfer_host', m.eventId)).toEqual([
            entry('meeting.transfer_host', m.eventId, 'alice', 'bob'),
          ]);
          expect(await control(via, m, 'lockMeeting')).toEqual({ ok: false, code: 'not_meeting_host' });
        }));
    }
  });

  describe('recording: start and stop by hub and REST are the same turn', () => {
    const start = (via: 'hub' | 'rest', user: string, s: HubClient, eventId: string) =>
      via === 'hub'
        ? hubAnswer(s, 'startRecording', { eventId })
        : restAnswer(user, 'GET', `/api/tenant/startrecording?eventId=${eventId}`);
    const stop = (via: 'hub' | 'rest', user: string, s: HubClient, eventId: string) =>
      via === 'hub'
        ? hubAnswer(s, 'stopRecording', { eventId })
        : restAnswer(user, 'GET', `/api/tenant/stoprecording?eventId=${eventId}`);

    for (const startVia of ['hub', 'rest'] as const)
      for (const stopVia of ['hub', 'rest'] as const)
        it(`started by ${startVia} (a member), refused to a participant who never joined, stopped by the host by ${stopVia}`, () =>
          fresh(async () => {
            const m = await meeting(false);
            const { s: b, r: rb } = await hub('bob');
            await must(b, 'joinEvent', { eventId: m.eventId });
            // cory is a clinician invited to the event who never joined and is no host.
            const { s: c } = await hub('cory');
            expect(await start(startVia, 'cory', c, m.eventId)).toEqual({ ok: false, code: 'forbidden' });
            expect((await node.services.recording.status('acme', m.eventId)).state).toBe('idle');
            expect(await audits('recording.start', m.eventId)).toEqual([]);

            expect((await start(startVia, 'bob', b, m.eventId)).ok).toBe(true);
            await m.ra.next('meetingEvent', (e) => e.type === 'recordingStarted' && e.by === ids.bob);
            expect((await details(m)).recording).toMatchObject({ active: true, startedBy: ids.bob });
            expect((await node.services.recording.status('acme', m.eventId)).state).toBe('starting');
            expect(await audits('recording.start', m.eventId)).toEqual([
              entry('recording.start', m.eventId, 'bob', 'bob'),
            ]);

            expect((await stop(stopVia, 'alice', m.alice, m.eventId)).ok).toBe(true);
            await rb.next('meetingEvent', (e) => e.type === 'recordingStopped' && e.by === ids.alice);
            expect((await details(m)).recording.active).toBe(false);
            expect((await node.services.recording.status('acme', m.eventId)).state).toBe('stopping');
            expect(await audits('recording.stop', m.eventId)).toEqual([
              entry('recording.stop', m.eventId, 'alice', 'alice'),
            ]);
          }));
  });

  describe('recording: a stop retried with its request id applies once, by either door', () => {
    for (const retryVia of ['hub', 'rest'] as const)
      it(`the first stop's answer lost, its retry by ${retryVia} answers it and leaves the recording started since`, () =>
        fresh(async () => {
          const m = await meeting(false);
          const requestId = `stop-${m.eventId}`;
          await must(m.alice, 'startRecording', { eventId: m.eventId });
          const first = await hubAnswer(m.alice, 'stopRecording', { eventId: m.eventId, requestId });
          expect(first).toMatchObject({ ok: true, data: { recording: { active: false } } });
          // The host, not knowing the stop was done (its answer lost), has since started another recording.
          await must(m.alice, 'startRecording', { eventId: m.eventId });
          expect((await details(m)).recording.active).toBe(true);
          const retry =
            retryVia === 'hub'
              ? await hubAnswer(m.alice, 'stopRecording', { eventId: m.eventId, requestId })
              : await restAnswer(
                  'alice',
                  'GET',
                  `/api/tenant/stoprecording?eventId=${m.eventId}&requestId=${requestId}`,
                );
          expect(retry.ok).toBe(true);
          if (retryVia === 'hub') expect(retry).toEqual(first);
          // The retry stopped nothing: the second recording runs, one stop is audited.
          expect((await details(m)).recording.active).toBe(true);
          expect((await node.services.recording.status('acme', m.eventId)).state).toBe('starting');
          expect(await audits('recording.stop', m.eventId)).toEqual([
            entry('recording.stop', m.eventId, 'alice', 'alice'),
          ]);
        }));
  });

  describe('a recording the meeting did not start (asked for before every door led here) is stopped all the same', () => {
    for (const via of ['hub stopRecording', 'REST stoprecording', 'hub endMeeting'] as const)
      it(`${via} stops it`, () =>
        fresh(async () => {
          const m = await meeting(false);
          await node.services.recording.requestStart('acme', m.eventId, ids.bob!, {
            actorId: ids.bob!,
            via: 'service',
          });
          expect((await details(m)).recording.active).toBe(false);
          const r =
            via === 'hub stopRecording'
              ? await hubAnswer(m.alice, 'stopRecording', { eventId: m.eventId })
              : via === 'REST stoprecording'
                ? await restAnswer('alice', 'GET', `/api/tenant/stoprecording?eventId=${m.eventId}`)
                : await hubAnswer(m.alice, 'endMeeting', { eventId: m.eventId });
          expect(r.ok).toBe(true);
          await m.ra.next('meetingEvent', (e) => e.type === 'recordingStopped' && e.by === ids.alice);
          expect((await node.services.recording.status('acme', m.eventId)).state).toBe('stopping');
          expect(await audits('recording.stop', m.eventId)).toEqual([
            entry('recording.stop', m.eventId, 'alice', 'alice'),
          ]);
        }));
  });

  describe('recording under a consent policy: every start asks, every answer door counts', () => {
    async function policy(recordingConsent: 'off' | 'all'): Promise<void> {
      const { db } = await node.services.tenants.require('acme');
      await db.models.TenantConfig.updateOne(
        { _id: 'tenant' },
        { $set: { 'meetings.recordingConsent': recordingConsent } },
      ).exec();
    }
    beforeAll(() => policy('all'));
    afterAll(() => policy('off'));

    const answerVia = (via: Entrance, s: HubClient, eventId: string, requestId: string): Promise<Answer> => {
      if (via === 'hub') return hubAnswer(s, 'consentToRecording', { eventId, requestId, consent: true });
      if (via === 'rest')
        return restAnswer('bob', 'POST', `/api/meetings/${eventId}/recording-consent`, { requestId, consent: true });
      return gqlAnswer(
        'bob',
        `mutation { consentToRecording(eventId: "${eventId}", requestId: "${requestId}", consent: true) { state consent } }`,
        'consentToRecording',
      );
    };

    for (const startVia of ['hub', 'rest'] as const)
      for (const via of ENTRANCES)
        it(`start by ${startVia} asks first; bob agrees by ${via}; then it records`, () =>
          fresh(async () => {
            const m = await meeting(false);
            const { s: b, r: rb } = await hub('bob');
            await must(b, 'joinEvent', { eventId: m.eventId });
            const started =
              startVia === 'hub'
                ? await hubAnswer(m.alice, 'startRecording', { eventId: m.eventId })
                : await restAnswer('alice', 'GET', `/api/tenant/startrecording?eventId=${m.eventId}`);
            expect(started.ok).toBe(true);
            const asked = await rb.next('recordingConsentRequested', (p) => p.eventId === m.eventId);
            expect((await details(m)).recording.active).toBe(false);
            expect((await node.services.recording.status('acme', m.eventId)).state).toBe('idle');
            expect(await answerVia(via, b, m.eventId, asked.requestId)).toMatchObject({ ok: true });
            await rb.next('meetingEvent', (e) => e.eventId === m.eventId && e.type === 'recordingStarted');
            expect((await details(m)).recording.active).toBe(true);
            expect(await audits('recording.consent', m.eventId)).toContainEqual(
              expect.objectContaining({ action: 'recording.consent', actorId: ids.bob, eventId: m.eventId }),
            );
            expect(await audits('recording.start', m.eventId)).toEqual([
              entry('recording.start', m.eventId, 'alice', 'alice'),
            ]);
          }));
  });

  /**
   * The video conferencing system's telemetry is an entrance too: the conference's end completes the
   * consultation in a turn of the meeting actor, so it ends the meeting for everyone in it (told in the
   * meeting's numbered order), stops what records, and is audited once, however often it is delivered.
   * The telemetry arrives over gRPC at a node of its own whose worker runs the completion job: it reaches
   * the meeting actors hosted by the first node as any other entrance does.
   */
  describe('telemetry: the conference ended, the meeting completes through the same turn', () => {
    let worker: TestNode;
    let telemetry: TelemetryClient;
    let conf = 0;

    beforeAll(async () => {
      worker = await startTestNode({ ...shared, ROLES: 'workers,telemetry' });
      const key = await node.services.telemetry.issueKey('acme');
      const port = (worker.roles.get('telemetry') as TelemetryRoleHandle).port;
      telemetry = new TelemetryClient(`127.0.0.1:${port}`, 'acme', key);
    }, 60_000);
    afterAll(async () => {
      telemetry?.close();
      await worker?.stop();
    });

    /**
     * The conference of `eventId` reported over gRPC and its completion job run by the worker node; then
     * delivered again (stored as duplicates) and its completion run again, as a retried job would: no change.
     */
    async function conferenceEnds(eventId: string, start = new Date()): Promise<void> {
      const conferenceId = `conf-${eventId}-${++conf}`;
      const script = conferenceScript({
        conferenceId,
        eventId,
        start,
        recording: true,
        participants: [{ key: ids.bob!, userId: ids.bob!, name: 'bob' }],
      });
      expect(await telemetry.stream(script)).toEqual({
        stored: script.length,
        duplicates: 0,
        completionsEnqueued: [conferenceId],
      });
      const done = await node.services.jobs.waitUntilFinished(
        'telemetry-completion',
        `completion.acme.${eventId}.${conferenceId}`,
      );
      expect(done.state).toBe('completed');
      expect(await telemetry.stream(script)).toMatchObject({ stored: 0, duplicates: script.length });
      const again = await worker.services.completion.complete({ tenant: 'acme', eventId, conferenceId });
      expect(again).toMatchObject({ completed: false, status: 'completed' });
    }

    const eventOf = async (eventId: string) =>
      (await node.services.tenants.require('acme')).db.models.Event.findById(eventId).lean().exec() as Promise<any>;
    const audited = (eventId: string) => [
      { action: 'telemetry.complete', outcome: 'success', actorId: undefined, subjectId: undefined, eventId },
    ];

    it('completes for everyone: members by each door told in order, the waiting told, the recording stopped, audited once', () =>
      fresh(async () => {
        const m = await meeting(true);
        const { s: b, r: rb } = await hub('bob');
        await must(b, 'joinEvent', { eventId: m.eventId });
        expect(await restAnswer('cory', 'POST', `/api/meetings/join/${m.code}`)).toMatchObject({ ok: true });
        const h = await join('hub initRapidConnect', m);
        await waits(m, h);
        await admittedBy(m, h, () => control('hub', m, 'admit', ids.hs));
        const p = await join('hub joinEvent', m);
        await waits(m, p);
        await must(m.alice, 'startRecording', { eventId: m.eventId });
        const before = (await details(m)).seq;

        await conferenceEnds(m.eventId);
        // Every member's sockets (a person by the hub, the headset by rapid connect) hear the same numbered end.
        const completed = (e: any) => e.eventId === m.eventId && e.type === 'meetingCompleted';
        for (const r of [m.ra, rb, h.r])
          expect(await r.next('meetingEvent', completed)).toMatchObject({
            seq: before + 2,
            data: { status: 'completed', hasLedger: true, hasRecording: true },
          });
        expect(await rb.next('meetingEvent', (e) => e.eventId === m.eventId && e.type === 'recordingStopped')).toEqual(
          expect.objectContaining({ seq: before + 1 }),
        );
        await p.r.next('waitingRoom', (x) => x.eventId === m.eventId && x.state === 'ended');
        expect(await details(m)).toMatchObject({
          ended: true,
          members: [],
          deviceIds: [],
          waiting: [],
          recording: { active: false },
          seq: before + 2,
        });
        const device = await actorSystemOf(node.roles).ask<any>(
          { tenant: 'acme', kind: 'device', id: h.hardwareId },
          { type: 'get' },
        );
        expect(device.meetingId).toBeUndefined();
        const stop = await worker.services.jobs.waitUntilFinished('recording', `recording.acme.${m.eventId}.1.stop`);
        expect(stop.state).toBe('completed');
        expect((await node.services.recording.status('acme', m.eventId)).state).toBe('stopped');
        expect(await audits('recording.stop', m.eventId)).toEqual([
          {
            action: 'recording.stop',
            outcome: 'success',
            actorId: undefined,
            subjectId: ids.alice,
            eventId: m.eventId,
          },
        ]);
        expect(await audits('telemetry.complete', m.eventId)).toEqual(audited(m.eventId));
        expect(await eventOf(m.eventId)).toMatchObject({ status: 'completed', hasRecording: true });
        // No door lets anyone into a completed meeting.
        for (const door of JOIN_DOORS) {
          const j = await join(door, m);
          expect({ door, answer: j.answer }).toEqual({ door, answer: { ok: false, code: 'invalid_state' } });
        }
      }));

    it('completes a meeting nobody joined through the hub (its actor has no state): numbered, ended, audited once', () =>
      fresh(async () => {
        const host = await node.services.auth.verifyAccessToken('acme', tokens.alice!);
        const e = await node.services.events.create(host, {
          name: `Door ${++seq}`,
          startAt: new Date().toISOString(),
          endAt: new Date(Date.now() + 3_600_000).toISOString(),
          participants: [{ userId: ids.bob!, role: 'participant' as const }],
          attachments: [],
        });
        const eventId = String(e._id);
        await conferenceEnds(eventId);
        const { s } = await hub('alice');
        expect(await must(s, 'getMeetingDetails', { eventId })).toMatchObject({ ended: true, members: [], seq: 1 });
        expect(await audits('telemetry.complete', eventId)).toEqual(audited(eventId));
        expect(await eventOf(eventId)).toMatchObject({ status: 'completed', hasLedger: true });
      }));

    it('after endMeeting: keeps the end it recorded, numbers the completion after meetingEnded, stops nothing twice', () =>
      fresh(async () => {
        const m = await meeting(false);
        const { s: b } = await hub('bob');
        await must(b, 'joinEvent', { eventId: m.eventId });
        await must(m.alice, 'startRecording', { eventId: m.eventId });
        await must(m.alice, 'endMeeting', { eventId: m.eventId });
        const ended = await eventOf(m.eventId);
        expect(ended.status).toBe('ended');
        const afterEnd = (await details(m)).seq;
        // The conference's clock runs an hour behind: its end is before the start this service recorded.
        await conferenceEnds(m.eventId, new Date(ended.startedAt.getTime() - 3_600_000));
        expect(await eventOf(m.eventId)).toMatchObject({
          status: 'completed',
          startedAt: ended.startedAt,
          endedAt: ended.endedAt,
        });
        expect(await details(m)).toMatchObject({ ended: true, seq: afterEnd + 1 });
        expect(await audits('meeting.end', m.eventId)).toEqual([entry('meeting.end', m.eventId, 'alice')]);
        expect(await audits('recording.stop', m.eventId)).toEqual([
          entry('recording.stop', m.eventId, 'alice', 'alice'),
        ]);
        expect(await audits('telemetry.complete', m.eventId)).toEqual(audited(m.eventId));
      }));
  });
});
