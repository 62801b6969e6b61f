import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorSystemOf, rendezvousOwner, shardOf } from '../../../src/actors/runtime/index.js';
import type { EmbeddedVcs } from '../../../src/vcs/index.js';
import type { PushPublisher } from '../../../src/realtime/push-delivery.js';
import { rooms } from '../../../src/realtime/rooms.js';
import type { ChildNode } from '../../support/child-node.js';
import { startHubPair } from '../../support/cluster.js';
import { request } from '../../support/http.js';
import type { TestNode } from '../../support/node.js';
import { call, must, recorder, type HubClient } from '../../support/hub-client.js';

const SHARDS = 16;

/**
 * Host controls of issue 20 (decision 900) on two nodes with real socket.io clients (default
 * transports): the meeting actor lives on the child node, the host's socket on the other one.
 */
describe('host controls across two nodes', () => {
  let pair: Awaited<ReturnType<typeof startHubPair>>;
  let node: TestNode;
  let child: ChildNode;
  let childId: string;
  let ids: Record<string, string>;
  let tokens: Record<string, string>;

  beforeAll(async () => {
    pair = await startHubPair(
      [
        ['alice', 'clinician'],
        ['bob', 'clinician'],
        ['pat', 'patient'],
        ['quinn', 'patient'],
      ] as const,
      { childName: 'ctl-child', shards: SHARDS },
    );
    ({ node, child, childId, ids, tokens } = pair);
  }, 90_000);
  afterAll(async () => pair?.destroy());

  const on = (url: string, user: string) => pair.on(url, user);
  const rest = (url: string, user: string, method: string, path: string, body?: unknown) =>
    pair.rest(url, user, method, path, body);

  const gql = (url: string, user: string, query: string) =>
    request(url, 'POST', '/graphql', { tenant: 'acme', token: tokens[user], body: { query } });

  /** An event of alice's (bob, pat, quinn invited as participants) whose meeting actor lives on the child node. */
  async function newEvent(waitingRoom: boolean): Promise<{ eventId: string; code: string }> {
    const host = await node.services.auth.verifyAccessToken('acme', tokens.alice!);
    const nodes = [node.config.nodeId, childId].sort();
    for (let i = 0; i < 64; i++) {
      const now = Date.now();
      const e = await node.services.events.create(host, {
        name: `Clinic ${i}`,
        startAt: new Date(now).toISOString(),
        endAt: new Date(now + 3_600_000).toISOString(),
        participants: ['bob', 'pat', 'quinn'].map((u) => ({ userId: ids[u]!, role: 'participant' as const })),
        attachments: [],
        waitingRoom,
      });
      const eventId = String(e._id);
      const owner = rendezvousOwner(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS), nodes);
      if (owner === childId) return { eventId, code: e.meetingCode };
    }
    throw new Error('no event placed as wanted');
  }

  /** `socket` is in the meeting room: a notify by the host reaches it. */
  async function hears(host: HubClient, rec: ReturnType<typeof recorder>, eventId: string, tag: string) {
    await must(host, 'notify', tag, { eventId });
    return rec.next('meetingEvent', (e) => e.type === 'notify' && e.data?.action === tag);
  }

  it('a host removes a participant, who is told, leaves the room and cannot rejoin until admitted again', async () => {
    const { eventId } = await newEvent(false);
    const alice = await on(node.url!, 'alice');
    const pat = await on(child.url, 'pat');
    const bob = await on(child.url, 'bob');
    const [ra, rp, rb] = [recorder(alice), recorder(pat), recorder(bob)];
    await must(alice, 'initEvent', { eventId });
    const patJoin = await must(pat, 'joinEvent', { eventId });
    const bobJoin = await must(bob, 'joinEvent', { eventId });
    await hears(alice, rp, eventId, 'before');
    // The embedded VCS (this node; the meeting actor runs on the child) takes pat's join token before the removal.
    const vcs = node.services.vcs as EmbeddedVcs;
    const verify = (join: { token: string; roomName: string }) => vcs.verifyJoinToken(join.token, join.roomName);
    expect(await verify(patJoin.join)).toMatchObject({ identity: ids.pat });

    const removed = await must(alice, 'removeParticipant', {
      eventId,
      userId: ids.pat,
      reason: 'Wrong patient',
      requestId: 'rm-1',
    });
    expect(removed).toMatchObject({ affected: [ids.pat], members: expect.not.arrayContaining([ids.pat]) });
    expect(await rp.next('removedFromMeeting')).toMatchObject({
      eventId,
      code: 'meeting_access_denied',
      by: ids.alice,
      reason: 'Wrong patient',
    });
    // Out of the media room too (decision 961): the token pat already holds is refused, bob's still works.
    await expect(verify(patJoin.join)).rejects.toMatchObject({ code: 'token_invalid' });
    expect(await verify(bobJoin.join)).toMatchObject({ identity: ids.bob });
    // The same request id answers the first result again.
    expect(await must(alice, 'removeParticipant', { eventId, userId: ids.pat, requestId: 'rm-1' })).toEqual(removed);
    // Out of the room: bob (same node as pat) hears the next notify; pat's socket, asked after, never did.
    await hears(alice, rb, eventId, 'after');
    await call(pat, 'getMeetingDetails', { eventId });
    expect(rp.of('meetingEvent').filter((e: { data?: { action?: string } }) => e.data?.action === 'after')).toEqual([]);
    expect(
      (await must(alice, 'getMeetingDetails', { eventId })).members.map((m: { userId: string }) => m.userId),
    ).toEqual(expect.not.arrayContaining([ids.pat]));
    // Rejoining waits for a host (marked as removed), by hub and by REST alike.
    expect(await must(pat, 'joinEvent', { eventId })).toMatchObject({ status: 'waiting', position: 1 });
    const queue = await ra.next('waitingRoomUpdated', (p) => p.waiting.length === 1);
    expect(queue.waiting).toEqual([expect.objectContaining({ userId: ids.pat, returning: 'removed' })]);
    // Admitted again by the host (a GraphQL mutation on the other node): in the room again.
    const readmitted = await gql(
      child.url,
      'alice',
      `mutation { admit(eventId: "${eventId}", userId: "${ids.pat}") { admitted waiting { userId } } }`,
    );
    expect(readmitted.body).toEqual({ data: { admit: { admitted: [ids.pat], waiting: [] } } });
    const admitted = await rp.next('waitingRoom', (p) => p.state === 'admitted');
    await hears(alice, rp, eventId, 'readmitted');
    // The admission's join details carry a fresh token that the VCS takes; the old one stays refused.
    expect(await verify(admitted.meeting.join)).toMatchObject({ identity: ids.pat });
    await expect(verify(patJoin.join)).rejects.toMatchObject({ code: 'token_invalid' });
    const types = ra.of('meetingEvent').map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['participantRemoved', 'participantWaiting', 'participantAdmitted']));
  });

  it('lock: a new join is refused without a waiting room and waits with one; unlock lets joins in again', async () => {
    const { eventId } = await newEvent(false);
    const alice = await on(node.url!, 'alice');
    const quinn = await on(child.url, 'quinn');
    await must(alice, 'initEvent', { eventId });
    const locked = await rest(node.url!, 'alice', 'POST', `/api/meetings/${eventId}/lock`, { requestId: 'lk-1' });
    expect(locked.status).toBe(200);
    expect(locked.body).toMatchObject({ eventId, locked: true });
    expect(await call(quinn, 'joinEvent', { eventId })).toMatchObject({ ok: false, error: { code: 'meeting_locked' } });
    expect((await must(alice, 'getMeetingDetails', { eventId })).locked).toBe(true);
    // Unlocked through GraphQL, on the other node: the same turn of the meeting actor.
    const unlocked = await gql(
      child.url,
      'alice',
      `mutation { unlockMeeting(eventId: "${eventId}") { locked affected } }`,
    );
    expect(unlocked.body).toEqual({ data: { unlockMeeting: { locked: false, affected: [eventId] } } });
    expect(await must(quinn, 'joinEvent', { eventId })).toMatchObject({ eventId, join: { token: expect.any(String) } });

    const w = await newEvent(true);
    await must(alice, 'initEvent', { eventId: w.eventId });
    await must(alice, 'lockMeeting', { eventId: w.eventId });
    // Invited clinicians skip the waiting room, but not while the meeting is locked.
    const bob = await on(child.url, 'bob');
    expect(await must(bob, 'joinEvent', { eventId: w.eventId })).toMatchObject({ status: 'waiting', position: 1 });
  });

  it('transferHost and addHost; a mute request reaches the member; host access is granted and refused', async () => {
    const { eventId } = await newEvent(false);
    const alice = await on(node.url!, 'alice');
    const bob = await on(child.url, 'bob');
    const pat = await on(child.url, 'pat');
    const [ra, rb, rp] = [recorder(alice), recorder(bob), recorder(pat)];
    await must(alice, 'initEvent', { eventId });
    await must(bob, 'joinEvent', { eventId });
    await must(pat, 'joinEvent', { eventId });

    const muted = await must(alice, 'muteRequest', { eventId, userId: ids.pat, media: 'both', message: 'Echo' });
    expect(muted.affected).toEqual([ids.pat]);
    expect(await rp.next('muteRequested')).toMatchObject({ eventId, by: ids.alice, media: 'both', message: 'Echo' });

    // Bob asks; alice grants: bob is told and is a host. Pat asks; bob (now a host) refuses.
    await must(bob, 'requestHostAccess', { eventId });
    await ra.next('meetingEvent', (e) => e.type === 'hostAccessRequested');
    expect(await must(alice, 'answerHostAccess', { eventId, userId: ids.bob, grant: true })).toMatchObject({
      hosts: [ids.alice, ids.bob],
    });
    expect(await rb.next('hostAccess')).toMatchObject({ eventId, state: 'granted', by: ids.alice });
    await must(pat, 'requestHostAccess', { eventId });
    const refused = await rest(child.url, 'bob', 'POST', `/api/meetings/${eventId}/hostAccess`, {
      userId: ids.pat,
      grant: false,
      message: 'The clinician keeps control',
    });
    expect(refused.status).toBe(200);
    expect(await rp.next('hostAccess')).toMatchObject({ state: 'refused', message: 'The clinician keeps control' });
    expect(await call(alice, 'answerHostAccess', { eventId, userId: ids.pat, grant: true })).toMatchObject({
      ok: false,
      error: { code: 'host_request_not_found' },
    });

    // Alice hands the meeting over to bob and is no longer a host of it; bob adds her back.
    expect(await must(alice, 'transferHost', { eventId, userId: ids.bob })).toMatchObject({ hosts: [ids.bob] });
    expect(await call(alice, 'lockMeeting', { eventId })).toMatchObject({
      ok: false,
      error: { code: 'not_meeting_host' },
    });
    expect(await call(bob, 'addHost', { eventId, userId: ids.pat })).toMatchObject({
      ok: false,
      error: { code: 'host_not_eligible' },
    });
    const added = await rest(child.url, 'bob', 'POST', `/api/meetings/${eventId}/addHost`, { userId: ids.alice });
    expect(added.body.hosts.sort()).toEqual([ids.alice, ids.bob].sort());
    const types = ra.of('meetingEvent').map((e: { type: string }) => e.type);
    await ra.next('meetingEvent', (e) => e.type === 'hostAdded');
    expect([...types, 'hostAdded']).toEqual(
      expect.arrayContaining(['muteRequested', 'hostAccessGranted', 'hostAccessRefused', 'hostTransferred']),
    );
  });

  it('a patient trying any host control gets permission_denied, on the hub, over REST and GraphQL', async () => {
    const { eventId } = await newEvent(false);
    const alice = await on(node.url!, 'alice');
    const pat = await on(child.url, 'pat');
    await must(alice, 'initEvent', { eventId });
    await must(pat, 'joinEvent', { eventId });
    const hub: [string, Record<string, unknown>][] = [
      ['removeParticipant', { userId: ids.alice }],
      ['endMeeting', {}],
      ['lockMeeting', {}],
      ['unlockMeeting', {}],
      ['transferHost', { userId: ids.pat }],
      ['addHost', { userId: ids.pat }],
      ['muteRequest', { userId: ids.alice }],
      ['answerHostAccess', { userId: ids.pat, grant: true }],
    ];
    for (const [m, args] of hub)
      expect([m, await call(pat, m as 'lockMeeting', { eventId, ...args })]).toEqual([
        m,
        expect.objectContaining({ ok: false, error: expect.objectContaining({ code: 'permission_denied' }) }),
      ]);
    const paths: [string, Record<string, unknown>][] = [
      ['remove', { userId: ids.alice }],
      ['end', {}],
      ['lock', {}],
      ['unlock', {}],
      ['transferHost', { userId: ids.pat }],
      ['addHost', { userId: ids.pat }],
      ['mute', { userId: ids.alice }],
      ['hostAccess', { userId: ids.pat, grant: true }],
    ];
    for (const [p, body] of paths) {
      const r = await rest(child.url, 'pat', 'POST', `/api/meetings/${eventId}/${p}`, body);
      expect([p, r.status, r.body.code]).toEqual([p, 403, 'permission_denied']);
    }
    const mutations = [
      `removeParticipant(eventId: "${eventId}", userId: "${ids.alice}")`,
      `endMeeting(eventId: "${eventId}")`,
      `lockMeeting(eventId: "${eventId}")`,
      `unlockMeeting(eventId: "${eventId}")`,
      `transferHost(eventId: "${eventId}", userId: "${ids.pat}")`,
      `addHost(eventId: "${eventId}", userId: "${ids.pat}")`,
      `muteRequest(eventId: "${eventId}", userId: "${ids.alice}")`,
      `answerHostAccess(eventId: "${eventId}", userId: "${ids.pat}", grant: true)`,
    ];
    for (const m of mutations) {
      const r = await gql(child.url, 'pat', `mutation { ${m} { eventId } }`);
      expect([m, r.body.errors?.[0]?.extensions?.code]).toEqual([m, 'permission_denied']);
    }
    // A clinician who is not a host of the meeting is refused by the meeting itself.
    const bob = await on(node.url!, 'bob');
    expect(await call(bob, 'endMeeting', { eventId })).toMatchObject({
      ok: false,
      error: { code: 'not_meeting_host' },
    });
    expect((await must(alice, 'getMeetingDetails', { eventId })).ended).toBeUndefined();
  });

  it('ends the meeting for everyone: every socket leaves, the VCS room closes, the event is ended, all audited', async () => {
    const { eventId } = await newEvent(true);
    const alice = await on(node.url!, 'alice');
    const bob = await on(child.url, 'bob');
    const quinn = await on(child.url, 'quinn');
    const [ra, rb, rq] = [recorder(alice), recorder(bob), recorder(quinn)];
    const started = await must(alice, 'initEvent', { eventId });
    await must(bob, 'joinEvent', { eventId });
    // Locked: pat and quinn wait; quinn is admitted, pat still waits when the meeting ends.
    await must(alice, 'lockMeeting', { eventId });
    const pat = await on(child.url, 'pat');
    const rp = recorder(pat);
    expect(await must(pat, 'joinEvent', { eventId })).toMatchObject({ status: 'waiting' });
    expect(await must(quinn, 'joinEvent', { eventId })).toMatchObject({ status: 'waiting' });
    await must(alice, 'admit', { eventId, userId: ids.quinn });
    await rq.next('waitingRoom', (p) => p.state === 'admitted');

    const ended = await rest(node.url!, 'alice', 'POST', `/api/meetings/${eventId}/end`, {
      reason: 'Consultation over',
      requestId: 'end-1',
    });
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ eventId, ended: true, members: [] });
    expect(ended.body.affected.sort()).toEqual([ids.alice, ids.bob, ids.quinn].sort());
    for (const r of [ra, rb, rq]) expect(await r.next('meetingEvent', (e) => e.type === 'meetingEnded')).toBeTruthy();
    expect(await rp.next('waitingRoom', (p) => p.state === 'ended')).toMatchObject({ eventId });
    // Repeated (same request id, or none): the same state, nothing more.
    expect(
      (await rest(node.url!, 'alice', 'POST', `/api/meetings/${eventId}/end`, { requestId: 'end-1' })).body,
    ).toEqual(ended.body);
    expect(await must(alice, 'endMeeting', { eventId })).toMatchObject({ ended: true, affected: [] });
    // Every socket left the room: a push to the meeting room no longer reaches a former member (on the
    // other node), while one to its user room sent after it does.
    const pub = (actorSystemOf(node.roles) as unknown as { publisher(): PushPublisher }).publisher();
    const at = new Date().toISOString();
    pub.emit(rooms.meeting('acme', eventId), 'meetingEvent', {
      eventId,
      seq: 0,
      type: 'notify',
      at,
      data: { action: 'late' },
    });
    pub.emit(rooms.user('acme', ids.bob!), 'meetingEvent', {
      eventId,
      seq: 0,
      type: 'notify',
      at,
      data: { action: 'bar' },
    });
    await rb.next('meetingEvent', (e) => e.data?.action === 'bar');
    expect(rb.of('meetingEvent').filter((e: { data?: { action?: string } }) => e.data?.action === 'late')).toEqual([]);
    expect(await call(bob, 'notify', 'x', { eventId })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await call(bob, 'joinEvent', { eventId })).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    // The event is ended; the VCS room is closed (its join tokens are refused).
    const ev = await rest(child.url, 'alice', 'GET', `/api/events/get/${eventId}`);
    expect(ev.body).toMatchObject({ status: 'ended', endedAt: expect.any(String) });
    await expect(
      (node.services.vcs as EmbeddedVcs).verifyJoinToken(started.join.token, started.join.roomName),
    ).rejects.toMatchObject({ code: 'token_invalid' });

    const audit = await node.services.auth.audit.list('acme', { eventId });
    const controls = audit.filter((a) => !['meeting.start', 'meeting.join', 'meeting.leave'].includes(a.action));
    const rows = controls.map((a) => [a.action, a.actorId, a.subjectId ?? null]).reverse();
    expect(rows).toEqual([
      ['event.create', ids.alice, null],
      ['meeting.lock', ids.alice, null],
      ['meeting.admit', ids.alice, ids.quinn],
      ['meeting.end', ids.alice, null],
    ]);
    expect(controls[0]!.details).toMatchObject({ reason: 'Consultation over', waiting: [ids.pat] });
  });

  // Last: it kills the child node, where every meeting of this file lives.
  it('keeps lock, removal and host changes across a SIGKILL of the node owning the meeting', async () => {
    const { eventId } = await newEvent(false);
    const system = actorSystemOf(node.roles);
    const alice = await on(node.url!, 'alice');
    const bob = await on(node.url!, 'bob');
    const pat = await on(node.url!, 'pat');
    await must(alice, 'initEvent', { eventId });
    await must(bob, 'joinEvent', { eventId });
    await must(pat, 'joinEvent', { eventId });
    await must(alice, 'removeParticipant', { eventId, userId: ids.pat });
    await must(alice, 'addHost', { eventId, userId: ids.bob });
    const locked = await must(alice, 'lockMeeting', { eventId, requestId: 'lock-before-kill' });
    expect(await system.leases.holder(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS))).toBe(childId);

    await child.kill();

    // Re-activated on the surviving node from the snapshot: still locked, bob still a host, pat still barred.
    const details = await must(bob, 'getMeetingDetails', { eventId });
    expect(details).toMatchObject({ locked: true });
    expect(details.members.map((m: { userId: string; role: string }) => [m.userId, m.role]).sort()).toEqual(
      [
        [ids.alice, 'host'],
        [ids.bob, 'host'],
      ].sort(),
    );
    expect(await system.leases.holder(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS))).toBe(
      node.config.nodeId,
    );
    expect(await must(pat, 'joinEvent', { eventId })).toMatchObject({ status: 'waiting' });
    const queue = await must(bob, 'getWaitingRoom', { eventId });
    expect(queue.waiting).toEqual([expect.objectContaining({ userId: ids.pat, returning: 'removed' })]);
    // The request id given before the kill still answers its first result.
    expect(await must(alice, 'lockMeeting', { eventId, requestId: 'lock-before-kill' })).toEqual(locked);
  });
});
