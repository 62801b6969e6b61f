import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { actorSystemOf, rendezvousOwner, shardOf } from '../../../src/actors/runtime/index.js';
import type { ChildNode } from '../../support/child-node.js';
import { startHubPair } from '../../support/cluster.js';
import { request } from '../../support/http.js';
import type { TestNode } from '../../support/node.js';
import { call, must, recorder } from '../../support/hub-client.js';

const SHARDS = 16;

/**
 * The waiting room of issue 20 on two nodes with real socket.io clients: patients wait, a clinician on
 * the other node admits one and denies another (hub and REST), nobody is admitted twice; then the
 * queue survives a SIGKILL of the node owning the meeting actor.
 */
describe('waiting room across two nodes', () => {
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
        ['rita', 'patient'],
      ] as const,
      { childName: 'wait-child', shards: SHARDS },
    );
    ({ node, child, childId, ids, tokens } = pair);
  }, 90_000);
  afterAll(async () => pair?.destroy());

  const on = (url: string, user: string) => pair.on(url, user);
  const rest = (url: string, user: string, method: string, path: string, body?: unknown) =>
    pair.rest(url, user, method, path, body);

  /** An event of alice's with a waiting room (bob is a clinician participant, not a host); `onChild` places its actor on the child. */
  async function newEvent(onChild: boolean): Promise<{ eventId: string; code: string }> {
    const host = await node.services.auth.verifyAccessToken('acme', tokens.alice!);
    const nodes = [node.config.nodeId, childId].sort();
    for (let i = 0; i < 64; i++) {
      const now = Date.now();
      const e = await node.services.events.create(host, {
        name: `Clinic ${i}`,
        startAt: new Date(now).toISOString(),
        endAt: new Date(now + 3_600_000).toISOString(),
        participants: [{ userId: ids.bob!, role: 'participant' }],
        attachments: [],
        waitingRoom: true,
      });
      const eventId = String(e._id);
      const owner = rendezvousOwner(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS), nodes);
      if ((owner === childId) === onChild) return { eventId, code: e.meetingCode };
    }
    throw new Error('no event placed as wanted');
  }

  it('a patient waits, a clinician on the other node admits them once, a second patient is denied', async () => {
    const { eventId, code } = await newEvent(false);
    const alice = await on(node.url!, 'alice');
    const pat = await on(child.url, 'pat');
    const quinn = await on(node.url!, 'quinn');
    const [ra, rp, rq] = [recorder(alice), recorder(pat), recorder(quinn)];
    expect((await must(alice, 'initEvent', { eventId })).meeting.waiting).toEqual([]);

    const waitP = await rest(child.url, 'pat', 'POST', `/api/meetings/join/${code}`);
    expect(waitP.status).toBe(200);
    expect(waitP.body).toMatchObject({ status: 'waiting', eventId, position: 1 });
    expect(waitP.body.join).toBeUndefined();
    expect(await rp.next('waitingRoom')).toMatchObject({ eventId, state: 'waiting', position: 1 });
    const waitQ = await rest(node.url!, 'quinn', 'POST', `/api/meetings/join/${code}`);
    expect(waitQ.body).toMatchObject({ status: 'waiting', position: 2 });
    const queue = await ra.next('waitingRoomUpdated', (p) => p.waiting.length === 2);
    expect(queue.waiting).toEqual([
      expect.objectContaining({ userId: ids.pat, kind: 'person', role: 'guest', invited: false, position: 1 }),
      expect.objectContaining({ userId: ids.quinn, position: 2 }),
    ]);

    // Hosts only: a patient lacks the permission, a clinician who is not a host of the event is refused.
    expect(await call(pat, 'admit', { eventId, userId: ids.pat })).toMatchObject({
      ok: false,
      error: { code: 'permission_denied' },
    });
    const bob = await on(child.url, 'bob');
    expect(await call(bob, 'admit', { eventId, userId: ids.pat })).toMatchObject({
      ok: false,
      error: { code: 'not_meeting_host' },
    });
    expect(await call(alice, 'admit', { eventId })).toMatchObject({ ok: false, error: { code: 'validation_failed' } });

    const admitted = await must(alice, 'admit', { eventId, userId: ids.pat, requestId: 'adm-1' });
    expect(admitted).toMatchObject({ admitted: [ids.pat], waiting: [{ userId: ids.quinn, position: 1 }] });
    const toPat = await rp.next('waitingRoom', (p) => p.state === 'admitted');
    expect(toPat.meeting).toMatchObject({ eventId, role: 'guest', join: { token: expect.any(String) } });
    expect(await rq.next('waitingRoom', (p) => p.position === 1 && p.state === 'waiting')).toBeTruthy();
    // The same request again replays its answer; another admit of an admitted patient admits nobody.
    expect(await must(alice, 'admit', { eventId, userId: ids.pat, requestId: 'adm-1' })).toEqual(admitted);
    expect((await must(alice, 'admit', { eventId, userId: ids.pat })).admitted).toEqual([]);
    // The admission moved the patient's socket (other node) into the meeting room.
    await must(alice, 'notify', 'welcome', { eventId });
    expect(await rp.next('meetingEvent', (e) => e.type === 'notify')).toMatchObject({ data: { action: 'welcome' } });
    // Joining again by code now gives the JoinResponse.
    expect((await rest(child.url, 'pat', 'POST', `/api/meetings/join/${code}`)).body).toMatchObject({
      eventId,
      join: { token: expect.any(String) },
    });

    const denied = await rest(node.url!, 'alice', 'POST', `/api/meetings/${eventId}/deny`, {
      userId: ids.quinn,
      message: 'Please call reception',
    });
    expect(denied.status).toBe(200);
    expect(denied.body).toMatchObject({ denied: [ids.quinn], waiting: [] });
    expect(await rq.next('waitingRoom', (p) => p.state === 'denied')).toMatchObject({
      message: 'Please call reception',
    });
    expect(
      (await rest(node.url!, 'quinn', 'POST', `/api/meetings/${eventId}/admit`, { all: true })).body,
    ).toMatchObject({ code: 'permission_denied' });
    // Denied: coming back means waiting again, marked for the host.
    expect((await rest(node.url!, 'quinn', 'POST', `/api/meetings/join/${code}`)).body).toMatchObject({
      status: 'waiting',
    });
    const listed = await rest(child.url, 'alice', 'GET', `/api/meetings/${eventId}/waiting`);
    expect(listed.body.waiting).toEqual([expect.objectContaining({ userId: ids.quinn, returning: 'denied' })]);
    const gql = await request(node.url!, 'POST', '/graphql', {
      tenant: 'acme',
      token: tokens.alice,
      body: { query: `{ waitingRoom(eventId: "${eventId}") { eventId waiting { userId position returning } } }` },
    });
    expect(gql.body.data.waitingRoom.waiting).toEqual([{ userId: ids.quinn, position: 1, returning: 'denied' }]);

    const types = ra.of('meetingEvent').map((e: { type: string; data?: { userId?: string } }) => e);
    expect(types.filter((e) => e.type === 'participantAdmitted').map((e) => e.data?.userId)).toEqual([ids.pat]);
  });

  it('keeps the queue across a SIGKILL of the node owning the meeting: no entry lost, none admitted twice', async () => {
    const { eventId, code } = await newEvent(true);
    const system = actorSystemOf(node.roles);
    const alice = await on(node.url!, 'alice');
    const ra = recorder(alice);
    await must(alice, 'initEvent', { eventId });
    for (const u of ['pat', 'quinn', 'rita'])
      expect((await rest(node.url!, u, 'POST', `/api/meetings/join/${code}`)).body).toMatchObject({
        status: 'waiting',
      });
    expect((await must(alice, 'admit', { eventId, userId: ids.pat })).admitted).toEqual([ids.pat]);
    await ra.next('meetingEvent', (e) => e.type === 'participantAdmitted');
    const before = await must(alice, 'getWaitingRoom', { eventId });
    expect(before.waiting.map((w: { userId: string }) => w.userId)).toEqual([ids.quinn, ids.rita]);
    expect(await system.leases.holder(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS))).toBe(childId);

    await child.kill();

    // The next turn re-activates the meeting on the surviving node from its snapshot.
    const after = await must(alice, 'getWaitingRoom', { eventId });
    expect(after).toEqual(before);
    expect(await system.leases.holder(shardOf({ tenant: 'acme', kind: 'meeting', id: eventId }, SHARDS))).toBe(
      node.config.nodeId,
    );
    expect((await must(alice, 'admit', { eventId, userId: ids.pat })).admitted).toEqual([]);
    expect((await must(alice, 'admit', { eventId, all: true })).admitted).toEqual([ids.quinn, ids.rita]);
    const details = await must(alice, 'getMeetingDetails', { eventId });
    expect(details.waiting).toEqual([]);
    expect(details.members.map((m: { userId: string }) => m.userId).sort()).toEqual(
      [ids.alice, ids.pat, ids.quinn, ids.rita].sort(),
    );
    await ra.next('meetingEvent', (e) => e.seq === details.seq);
    const admissions = ra
      .of('meetingEvent')
      .filter((e: { type: string }) => e.type === 'participantAdmitted')
      .map((e: { data: { userId: string } }) => e.data.userId);
    expect(admissions.sort()).toEqual([ids.pat, ids.quinn, ids.rita].sort());
  });
});
