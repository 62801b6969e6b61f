import { describe, it, expect } from '@jest/globals';
import { meetingActor, type MeetingActorDeps } from './meeting.actor.js';
import type { Caller } from '../../kernel/caller.js';
import type { Admission } from '../../core/meetings/meeting-data.js';
import type { MeetingAuditEntry } from './meeting-state.js';
import type { MeetingEnd } from '../../core/meetings/event-status.js';
import { AppError } from '../../kernel/errors.js';
import { turnHarness } from '../../../test/support/turn-harness.js';

const T = 'acme';
const A = 'a'.repeat(24);
const B = 'b'.repeat(24);
const P = 'd'.repeat(24);
const G = 'e'.repeat(24);
const clinician = (id: string): Caller => ({
  userId: id,
  username: id,
  role: 'clinician',
  permissions: ['meetings:host'],
});
const patient = (id: string): Caller => ({ userId: id, username: id, role: 'patient', permissions: ['meetings:join'] });

function setup(id: string, policy: Partial<Admission> = {}, consent: 'off' | 'all' = 'off') {
  const log: string[] = [];
  const audits: MeetingAuditEntry[] = [];
  const vcs = { down: false };
  const recorder = { running: false };
  const participants = [A, B, P];
  const room = { provider: 'embedded', roomName: 'r1', url: 'embedded://r1' };
  // The event's end as stored (what an actor without a snapshot rebuilds from): endMeeting's write keeps its last seq.
  const event: { end: MeetingEnd | null } = { end: null };
  const data = async (_t: string, c: Caller, eventId: string) => ({
    eventId,
    room,
    token: `tok-${c.userId}`,
    role: c.userId === A ? 'host' : participants.includes(c.userId) ? 'participant' : 'guest',
  });
  const deps: MeetingActorDeps = {
    initEvent: data,
    joinEvent: data,
    admission: async (_t, c, eventId) => ({
      eventId,
      role: c.userId === A ? 'host' : participants.includes(c.userId) ? 'participant' : 'guest',
      invited: participants.includes(c.userId),
      waitingRoom: false,
      autoAdmitInvited: true,
      expirySeconds: 60,
      ...policy,
    }),
    isParticipant: async (_t, _e, u) => participants.includes(u),
    isHost: async (_t, _e, u) => u === A,
    // As the recording service: it records from a start to a stop; a stop of nothing is `invalid_state`.
    startRecording: async () => {
      log.push('startRecording');
      recorder.running = true;
    },
    stopRecording: async () => {
      if (!recorder.running) throw new AppError('invalid_state', 'The event is not being recorded');
      log.push('stopRecording');
      recorder.running = false;
    },
    endEvent: async (_t, _e, last) => {
      log.push('endEvent');
      event.end = { status: 'ended', at: new Date().toISOString(), seq: Math.max(event.end?.seq ?? 0, last?.seq ?? 0) };
    },
    meetingEnd: async () => event.end,
    keepLastSeq: async (_t, _e, seq) => void (event.end && (event.end.seq = Math.max(event.end.seq, seq))),
    removeFromRoom: async (_t, _e, m) => {
      if (vcs.down) throw new AppError('service_unavailable', 'VCS unreachable', { retryAfter: 5 });
      log.push(`removeFromRoom:${m.userId}`);
    },
    audit: async (_t, e) => void audits.push(e),
    consentSettings: async () => ({ policy: consent, timeoutSeconds: 60 }),
    recordConsent: async () => undefined,
    recordingRunning: async () => recorder.running,
    attachDevice: async () => undefined,
    recordingOwner: async () => null,
    completeEvent: async () => ({
      changed: true,
      status: 'completed',
      flags: { hasLedger: false, hasRecording: false, hasChat: false },
    }),
    completionAudited: async () => false,
  };
  const h = turnHarness(meetingActor(deps), { tenant: T, kind: 'meeting', id });
  const types = () => h.emitted.filter((e) => e.event === 'meetingEvent').map((e) => e.payload.type as string);
  const to = (user: string, event: string) =>
    h.emitted.filter((e) => e.event === event && e.rooms[0] === `user:${T}:${user}`).map((e) => e.payload);
  /** The same event's actor activated afresh: no snapshot (it expired after the retention, decision 1104). */
  const fresh = () => turnHarness(meetingActor(deps), { tenant: T, kind: 'meeting', id });
  return { h, deps, log, audits, types, to, vcs, event, fresh };
}

describe('meeting actor host controls', () => {
  it('removes a member: out of the rooms, told with a code, waiting for a host when they come back', async () => {
    const { h, log, audits, types, to } = setup('ev1');
    await h.send({ type: 'init', caller: clinician(A) });
    await h.send({ type: 'join', caller: patient(P) });
    await expect(h.send({ type: 'removeParticipant', caller: patient(P), userId: A })).rejects.toMatchObject({
      code: 'not_meeting_host',
    });
    await expect(h.send({ type: 'removeParticipant', caller: clinician(A), userId: G })).rejects.toMatchObject({
      code: 'participant_not_found',
    });
    const r = await h.send({ type: 'removeParticipant', caller: clinician(A), userId: P, reason: 'disruptive' });
    expect(r).toMatchObject({ affected: [P], members: [A], hosts: [A] });
    expect(log).toEqual([`removeFromRoom:${P}`]);
    expect(to(P, 'removedFromMeeting')).toEqual([
      expect.objectContaining({ code: 'meeting_access_denied', by: A, reason: 'disruptive' }),
    ]);
    expect(h.emitted.filter((e) => e.event === 'move').at(-1)).toMatchObject({
      rooms: [`user:${T}:${P}`],
      payload: { leave: [`meeting:${T}:ev1`, `meeting-devices:${T}:ev1`] },
    });
    // Removing again changes nothing; coming back waits for a host even without a waiting room.
    expect(await h.send({ type: 'removeParticipant', caller: clinician(A), userId: P })).toMatchObject({
      affected: [],
    });
    expect(log).toEqual([`removeFromRoom:${P}`]);
    expect(await h.send({ type: 'join', caller: patient(P) })).toMatchObject({ status: 'waiting', position: 1 });
    expect((await h.send({ type: 'waitingRoom', caller: clinician(A) })).waiting).toEqual([
      expect.objectContaining({ userId: P, returning: 'removed' }),
    ]);
    await h.send({ type: 'admit', caller: clinician(A), userId: P });
    expect(h.state.members[P]).toBeDefined();
    expect(types()).toEqual(
      expect.arrayContaining(['participantRemoved', 'participantWaiting', 'participantAdmitted']),
    );
    expect(audits.map((a) => [a.action, a.actorId, a.subjectId])).toEqual([
      ['meeting.remove_participant', A, P],
      ['meeting.admit', A, P],
    ]);
  });

  it('does not remove anyone while the VCS cannot take them out of the media room (decision 961)', async () => {
    const { h, log, audits, to, vcs } = setup('ev1v');
    await h.send({ type: 'init', caller: clinician(A) });
    await h.send({ type: 'join', caller: patient(P) });
    vcs.down = true;
    await expect(h.send({ type: 'removeParticipant', caller: clinician(A), userId: P })).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(h.state.members[P]).toBeDefined();
    expect(h.state.barred![P]).toBeUndefined();
    expect(to(P, 'removedFromMeeting')).toEqual([]);
    expect(audits).toEqual([]);
    // Reachable again: the host's retry removes them.
    vcs.down = false;
    expect(await h.send({ type: 'removeParticipant', caller: clinician(A), userId: P })).toMatchObject({
      affected: [P],
    });
    expect(log).toEqual([`removeFromRoom:${P}`]);
  });

  it('locks: new joins wait with a waiting room, are refused without one; members and hosts still come in', async () => {
    const open = setup('ev2');
    await open.h.send({ type: 'init', caller: clinician(A) });
    await open.h.send({ type: 'join', caller: clinician(B) });
    expect(await open.h.send({ type: 'lockMeeting', caller: clinician(A) })).toMatchObject({ locked: true });
    expect(await open.h.send({ type: 'lockMeeting', caller: clinician(A) })).toMatchObject({ affected: [] });
    await expect(open.h.send({ type: 'join', caller: patient(P) })).rejects.toMatchObject({ code: 'meeting_locked' });
    expect(await open.h.send({ type: 'join', caller: clinician(B) })).toMatchObject({ token: `tok-${B}` });
    expect((await open.h.send({ type: 'details', caller: clinician(A) })).locked).toBe(true);
    await open.h.send({ type: 'unlockMeeting', caller: clinician(A) });
    expect(await open.h.send({ type: 'join', caller: patient(P) })).toMatchObject({ token: `tok-${P}` });
    expect(open.types()).toEqual(expect.arrayContaining(['meetingLocked', 'meetingUnlocked']));

    const waiting = setup('ev3', { waitingRoom: true });
    await waiting.h.send({ type: 'init', caller: clinician(A) });
    await waiting.h.send({ type: 'lockMeeting', caller: clinician(A) });
    // Even an invited clinician waits while the meeting is locked.
    expect(await waiting.h.send({ type: 'join', caller: clinician(B) })).toMatchObject({ status: 'waiting' });
    expect(waiting.audits.map((a) => a.action)).toEqual(['meeting.lock']);
  });

  it('ends for everyone: recording stopped, event ended, sockets out, waiting entries told; nothing after', async () => {
    const { h, log, audits, types, to } = setup('ev4', { waitingRoom: true, autoAdmitInvited: true });
    await h.send({ type: 'init', caller: clinician(A) });
    await h.send({ type: 'join', caller: clinician(B) });
    await h.send({ type: 'join', caller: { ...patient(G), role: 'guest' }, code: 'CODE' });
    await h.send({ type: 'startRecording', caller: clinician(A) });
    await expect(h.send({ type: 'endMeeting', caller: clinician(B) })).rejects.toMatchObject({
      code: 'not_meeting_host',
    });
    const r = await h.send({ type: 'endMeeting', caller: clinician(A), reason: 'done' });
    expect(r).toMatchObject({ ended: true, members: [], affected: [A, B] });
    expect(log).toEqual(['startRecording', 'stopRecording', 'endEvent']);
    expect(to(G, 'waitingRoom').at(-1)).toMatchObject({ state: 'ended' });
    expect(h.emitted.filter((e) => e.event === 'move').at(-1)).toMatchObject({
      rooms: [`meeting:${T}:ev4`],
      payload: { leave: [`meeting:${T}:ev4`, `meeting-devices:${T}:ev4`] },
    });
    expect(types().slice(-2)).toEqual(['recordingStopped', 'meetingEnded']);
    expect(h.timers.has('waitingExpiry')).toBe(false);
    // Again: the same state, nothing more done; joins and other controls are refused.
    expect(await h.send({ type: 'endMeeting', caller: clinician(A) })).toMatchObject({ ended: true, affected: [] });
    expect(log.filter((l) => l === 'endEvent')).toHaveLength(1);
    await expect(h.send({ type: 'join', caller: clinician(B) })).rejects.toMatchObject({ code: 'invalid_state' });
    await expect(h.send({ type: 'lockMeeting', caller: clinician(A) })).rejects.toMatchObject({
      code: 'invalid_state',
    });
    expect(audits.filter((a) => a.action === 'meeting.end')).toEqual([
      expect.objectContaining({ actorId: A, details: { members: [A, B], waiting: [G], reason: 'done' } }),
    ]);
  });

  it('transfers and adds hosts (kept across a rejoin), refusing members who may not host', async () => {
    const { h, types } = setup('ev5');
    await h.send({ type: 'init', caller: clinician(A) });
    await h.send({ type: 'join', caller: clinician(B) });
    await h.send({ type: 'join', caller: patient(P) });
    await expect(h.send({ type: 'addHost', caller: clinician(A), userId: P })).rejects.toMatchObject({
      code: 'host_not_eligible',
    });
    expect(await h.send({ type: 'transferHost', caller: clinician(A), userId: B })).toMatchObject({ hosts: [B] });
    // The organizer handed over: no longer a host here, even though the event says so.
    await expect(h.send({ type: 'lockMeeting', caller: clinician(A) })).rejects.toMatchObject({
      code: 'not_meeting_host',
    });
    await h.send({ type: 'join', caller: clinician(A) });
    await h.send({ type: 'join', caller: clinician(B) });
    expect(h.state.members[A]!.role).toBe('participant');
    expect(h.state.members[B]!.role).toBe('host');
    expect(await h.send({ type: 'addHost', caller: clinician(B), userId: A })).toMatchObject({ hosts: [A, B] });
    expect(await h.send({ type: 'addHost', caller: clinician(B), userId: A })).toMatchObject({ affected: [] });
    expect(types()).toEqual(expect.arrayContaining(['hostTransferred', 'hostAdded']));
  });

  it('shows the waiting room to the meeting’s hosts only, by their role here: not to a host who handed over', async () => {
    const { h, deps } = setup('ev5b', { waitingRoom: true });
    let eventReads = 0;
    const isHost = deps.isHost;
    deps.isHost = async (...a) => (eventReads++, isHost(...a));
    await h.send({ type: 'init', caller: clinician(A) });
    await h.send({ type: 'join', caller: clinician(B) });
    await h.send({ type: 'join', caller: patient(G) });
    const view = async (c: Caller) => (await h.send({ type: 'details', caller: c })) as { waiting?: unknown[] };
    expect((await view(clinician(A))).waiting).toHaveLength(1);
    // A participant member's view is decided by the meeting's roles, without reading the event.
    eventReads = 0;
    expect((await view(clinician(B))).waiting).toBeUndefined();
    expect(eventReads).toBe(0);
    await h.send({ type: 'transferHost', caller: clinician(A), userId: B });
    // The organizer handed over: the event still names them host, the meeting does not.
    expect((await view(clinician(A))).waiting).toBeUndefined();
    expect((await view(clinician(B))).waiting).toHaveLength(1);
    expect(eventReads).toBe(0);
  });

  it('delivers mute requests to the member, and answers host access requests (granted, refused)', async () => {
    const { h, to, audits } = setup('ev6');
    await h.send({ type: 'init', caller: clinician(A) });
    await h.send({ type: 'join', caller: clinician(B) });
    await h.send({ type: 'join', caller: patient(P) });
    await h.send({ type: 'muteRequest', caller: clinician(A), userId: P, media: 'audio', message: 'echo' });
    expect(to(P, 'muteRequested')).toEqual([expect.objectContaining({ by: A, media: 'audio', message: 'echo' })]);
    await expect(
      h.send({ type: 'answerHostAccess', caller: clinician(A), userId: B, grant: true }),
    ).rejects.toMatchObject({ code: 'host_request_not_found' });
    await h.send({ type: 'requestHostAccess', caller: clinician(B) });
    await h.send({ type: 'requestHostAccess', caller: patient(P) });
    expect(await h.send({ type: 'answerHostAccess', caller: clinician(A), userId: B, grant: true })).toMatchObject({
      hosts: [A, B],
    });
    expect(to(B, 'hostAccess')).toEqual([expect.objectContaining({ state: 'granted', by: A })]);
    await h.send({ type: 'answerHostAccess', caller: clinician(B), userId: P, grant: false, message: 'not now' });
    expect(to(P, 'hostAccess')).toEqual([expect.objectContaining({ state: 'refused', message: 'not now' })]);
    await expect(
      h.send({ type: 'answerHostAccess', caller: clinician(A), userId: P, grant: true }),
    ).rejects.toMatchObject({ code: 'host_request_not_found' });
    expect(audits.map((a) => [a.action, a.details])).toEqual([
      ['meeting.mute_request', { media: 'audio', message: 'echo' }],
      ['meeting.host_access_answer', { answer: 'granted' }],
      ['meeting.host_access_answer', { answer: 'refused', message: 'not now' }],
    ]);
  });

  it('ends with a consent request open: closed unreached, no late answer starts a recording', async () => {
    const { h, log, to } = setup('ev7', {}, 'all');
    await h.send({ type: 'init', caller: clinician(A) });
    await h.send({ type: 'join', caller: patient(P) });
    await h.send({ type: 'startRecording', caller: clinician(A), requestId: 'rec-1' });
    expect(h.timers.has('recordingConsent')).toBe(true);
    await h.send({ type: 'endMeeting', caller: clinician(A) });
    expect(h.state.consent!.request).toMatchObject({ requestId: 'rec-1', outcome: 'timedOut' });
    expect(to(A, 'recordingConsentResult').at(-1)).toMatchObject({ requestId: 'rec-1', outcome: 'timedOut' });
    expect(h.timers.has('recordingConsent')).toBe(false);
    await expect(
      h.send({ type: 'consentToRecording', caller: patient(P), requestId: 'rec-1', consent: true }),
    ).rejects.toMatchObject({ code: 'invalid_state' });
    expect(log).not.toContain('startRecording');
  });
});

describe('an ended meeting retires its snapshot (decision 1104)', () => {
  it('endMeeting retires the snapshot and keeps the last seq with the event it ends; live turns retire nothing', async () => {
    const { h, event } = setup('ev8');
    await h.send({ type: 'init', caller: clinician(A) });
    await h.send({ type: 'join', caller: clinician(B) });
    await h.send({ type: 'lockMeeting', caller: clinician(A) });
    expect(h.retired).toBeUndefined();
    const ended = await h.send({ type: 'endMeeting', caller: clinician(A) });
    // The node's retention (ACTOR_RETIRED_RETENTION_SECONDS).
    expect(h.retired).toEqual({});
    expect(ended.seq).toBe(h.state.seq);
    expect(event.end).toMatchObject({ status: 'ended', seq: ended.seq });
    // Ending again answers the same and retires again (a snapshot kept before meetings retired gets its expiry).
    await h.send({ type: 'details', caller: clinician(A) });
    expect(await h.send({ type: 'endMeeting', caller: clinician(A) })).toMatchObject({ seq: ended.seq, affected: [] });
    expect(h.retired).toEqual({});
  });

  it('a fresh actor on an ended event refuses controls and joins, ends again without a second audit entry, shows the end', async () => {
    const { h, log, audits, fresh } = setup('ev9');
    await h.send({ type: 'init', caller: clinician(A) });
    await h.send({ type: 'join', caller: clinician(B) });
    await h.send({ type: 'join', caller: patient(P) });
    await h.send({ type: 'notify', caller: clinician(B), action: 'raiseHand' });
    const ended = await h.send({ type: 'endMeeting', caller: clinician(A), reason: 'done' });
    expect(ended.seq).toBeGreaterThan(1);

    // The snapshot expired: the next message activates the actor afresh on the same (ended) event.
    const later = fresh();
    for (const msg of [
      { type: 'lockMeeting', caller: clinician(A) },
      { type: 'unlockMeeting', caller: clinician(A) },
      { type: 'addHost', caller: clinician(A), userId: B },
      { type: 'removeParticipant', caller: clinician(A), userId: P },
      { type: 'init', caller: clinician(A) },
      { type: 'join', caller: clinician(B) },
      { type: 'startRecording', caller: clinician(A) },
    ] as const)
      expect([msg.type, await later.send(msg).catch((e) => e.code)]).toEqual([msg.type, 'invalid_state']);
    expect(await later.send({ type: 'endMeeting', caller: clinician(A) })).toEqual({
      eventId: 'ev9',
      seq: ended.seq,
      locked: false,
      ended: true,
      hosts: [],
      members: [],
      affected: [],
    });
    expect(audits.filter((a) => a.action === 'meeting.end')).toHaveLength(1);
    expect(log.filter((l) => l === 'endEvent')).toHaveLength(1);
    expect(await later.send({ type: 'details', caller: clinician(A) })).toMatchObject({
      started: true,
      ended: true,
      seq: ended.seq,
      members: [],
      waiting: [],
    });
    expect(await later.send({ type: 'details', caller: patient(P) })).toMatchObject({ ended: true, seq: ended.seq });
    // Nothing was numbered again from seq 1.
    expect(later.emitted.filter((e) => e.event === 'meetingEvent')).toEqual([]);
  });

  it('a fresh actor on a cancelled event takes no host control either', async () => {
    const { event, fresh, audits } = setup('ev10');
    event.end = { status: 'cancelled', at: new Date().toISOString(), seq: 0 };
    const h = fresh();
    await expect(h.send({ type: 'lockMeeting', caller: clinician(A) })).rejects.toMatchObject({
      code: 'invalid_state',
    });
    expect(await h.send({ type: 'details', caller: clinician(A) })).toMatchObject({ started: false, ended: true });
    expect(audits).toEqual([]);
  });
});
