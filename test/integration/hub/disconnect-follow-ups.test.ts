import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { inHours } from '../../support/events.js';
import { connect, hubClient, must, recorder, type HubClient } from '../../support/hub-client.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import type { HubRoleHandle } from '../../../src/hub/hub.role.js';

const T = 'followups';

/**
 * What a socket's disconnect leaves to do (the meeting leave of the audit trail, leaving a waiting room,
 * presence) is tracked: `settled()` of the hub answers only once it is done, so a test reading a tenant's
 * state after closing its sockets reads it as the disconnects left it (the isolation matrix compares
 * such reads), and the hub's stop waits for it before the stores close.
 */
describe('hub: the work a disconnect starts', () => {
  let node: TestNode;
  let hub: HubRoleHandle;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const open: HubClient[] = [];

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors' });
    hub = node.roles.get('hub') as HubRoleHandle;
    for (const [username, role] of [
      ['cora', 'clinician'],
      ['pat', 'patient'],
      ['pia', 'patient'],
    ] as const) {
      ids[username] = await createUser(node, T, { username, role });
      tokens[username] = await tokenFor(node, T, username);
    }
    // Invited participants wait too where the meeting has a waiting room.
    await node.infra.mongo
      .tenantDb(T)
      .models.TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'meetings.waitingRoomAutoAdmitInvited': false } })
      .exec();
    node.services.admin.forget(T);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await node.destroy();
  });

  const socket = async (user: string) => {
    const s = await connect(node.url!, T, { token: tokens[user] });
    open.push(s);
    return s;
  };

  /** A meeting Cora hosts (started by her socket), with Pat invited. */
  const meeting = async (opts: { waitingRoom?: boolean } = {}) => {
    const r = await node.http.post('/api/events/create', {
      tenant: T,
      token: tokens.cora,
      body: { name: 'Consult', startAt: inHours(0), endAt: inHours(1), participants: [{ userId: ids.pat }] },
    });
    expect(r.status).toBe(201);
    const eventId = r.body.id as string;
    if (opts.waitingRoom)
      await node.infra.mongo
        .tenantDb(T)
        .models.Event.updateOne({ _id: eventId }, { $set: { waitingRoom: true } })
        .exec();
    const host = await socket('cora');
    await must(host, 'initEvent', { eventId });
    return { eventId, host };
  };

  /** Closes a client and resolves once the hub saw it go (its disconnect handlers have run). */
  const close = async (s: HubClient) => {
    const server = hub.io.of('/').sockets.get(s.id!)!;
    const gone = new Promise<void>((r) => server.once('disconnect', () => r()));
    s.close();
    await gone;
  };

  /**
   * Holds the calls of `obj[name]` that `holds` picks until `release()`: the disconnect's work is then
   * still running when everything else the disconnect started (presence, its offline push) is done.
   */
  const gate = <O extends object>(obj: O, name: keyof O & string, holds: (...args: any[]) => boolean) => {
    const original = (obj as any)[name] as (...args: any[]) => Promise<unknown>;
    let release!: () => void;
    const opened = new Promise<void>((r) => (release = r));
    let held = 0;
    (obj as any)[name] = async (...args: any[]) => {
      if (holds(...args)) {
        held += 1;
        await opened;
      }
      return original.apply(obj, args);
    };
    return {
      held: () => held,
      release,
      restore: () => void ((obj as any)[name] = original),
    };
  };

  /**
   * Closes Pat's socket with the work `g` holds: settled() is still pending once the hub's other work of
   * the disconnect is done (Cora got Pat's offline push, the last thing presence does), and resolves
   * after the held work is let go.
   */
  const closeHeld = async (pat: HubClient, host: HubClient, g: ReturnType<typeof gate>) => {
    const offline = recorder(host).next('userStatus', (p) => p.userId === ids.pat && p.online === false);
    await close(pat);
    let done = false;
    const settled = hub.settled().then(() => (done = true));
    await offline;
    expect({ held: g.held(), settled: done }).toEqual({ held: 1, settled: false });
    g.release();
    await settled;
    g.restore();
  };

  it("answers once a closed socket's meeting leave is in the audit trail", async () => {
    const { eventId, host } = await meeting();
    const pat = await socket('pat');
    await must(pat, 'joinEvent', { eventId });
    await closeHeld(
      pat,
      host,
      gate(node.services.meetings, 'left', () => true),
    );
    const leaves = [];
    for await (const e of node.services.auth.audit.entries(T))
      if (e.action === 'meeting.leave' && e.eventId === eventId) leaves.push(String(e.subjectId));
    expect(leaves).toEqual([ids.pat]);
  });

  it('answers once a closed waiting socket has left the waiting room', async () => {
    const { eventId, host } = await meeting({ waitingRoom: true });
    const pat = await socket('pat');
    expect(await must(pat, 'joinEvent', { eventId })).toMatchObject({ status: 'waiting' });
    expect((await must(host, 'getWaitingRoom', { eventId })).waiting).toHaveLength(1);
    await closeHeld(
      pat,
      host,
      gate(hub.actors, 'ask', (_to, msg) => msg?.type === 'leaveWaiting'),
    );
    expect((await must(host, 'getWaitingRoom', { eventId })).waiting).toEqual([]);
  });

  it('keeps one disconnect listener per socket however many meetings it waits in, and leaves every queue', async () => {
    const meetings = [];
    for (let i = 0; i < 12; i++) meetings.push(await meeting({ waitingRoom: true }));
    const pat = await socket('pat');
    const server = hub.io.of('/').sockets.get(pat.id!)!;
    const before = {
      disconnect: server.listenerCount('disconnect'),
      disconnecting: server.listenerCount('disconnecting'),
    };
    for (const { eventId } of meetings)
      expect(await must(pat, 'joinEvent', { eventId })).toMatchObject({ status: 'waiting' });
    // Node warns past ten listeners of one event: a listener per meeting passed it on a headset's socket.
    expect(server.listenerCount('disconnect')).toBe(before.disconnect + 1);
    expect(server.listenerCount('disconnecting')).toBe(before.disconnecting + 1);
    await close(pat);
    await hub.settled();
    for (const { eventId, host } of meetings)
      expect((await must(host, 'getWaitingRoom', { eventId })).waiting).toEqual([]);
  });

  it('takes a socket off presence when its transport closes before the hub admitted it', async () => {
    // Pia's presence add is held until her transport has closed: Socket.IO then drops the socket without
    // 'connection' or 'disconnect' (a blip during a handshake), and nothing else would take her off.
    const presence = node.services.presence;
    const original = presence.connected;
    let entered!: () => void;
    const adding = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    presence.connected = async (...args: Parameters<typeof original>) => {
      if (args[1] === ids.pia) {
        entered();
        await held;
      }
      return original.apply(presence, args);
    };
    try {
      const transport = new Promise<{ once(e: 'close', f: () => void): void }>((r) =>
        hub.io.engine.once('connection', r),
      );
      const pia = hubClient(node.url!, T, { token: tokens.pia });
      const conn = await transport;
      await adding;
      const closed = new Promise<void>((r) => conn.once('close', r));
      pia.close();
      await closed;
      release();
      await hub.settled();
      expect(await presence.isOnline(T, ids.pia)).toBe(false);
    } finally {
      presence.connected = original;
    }
  });
});
