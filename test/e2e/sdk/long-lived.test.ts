import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, loginFor } from '../../support/auth.js';
import { tenantFetch } from '../../support/sdk.js';
import { createRestClient, HubClient, Session, type RestClient } from '../../../packages/client/src/index.js';

/**
 * Issue 35 section 3: the SDK keeps a client signed in and its pushes whole for a day. Access tokens
 * live 4 s here (set in the tenant's rules), so expiry, refresh and the hub's `token_expired` happen
 * within the test.
 */
describe('the SDK lives the day for its user', () => {
  let node: TestNode;
  let refreshes = 0;
  let api: RestClient;
  let bobId: string;
  let aliceId: string;
  let bobLogin: Awaited<ReturnType<typeof loginFor>>;
  const hubs: HubClient[] = [];

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,hub,actors', HUB_PUSH_HISTORY_MAX: '3' });
    aliceId = await createUser(node, 'acme', { username: 'alice', role: 'clinician' });
    bobId = await createUser(node, 'acme', { username: 'bob', role: 'clinician' });
    // Bob, who only places the calls, signs in with the default lifetime (300 s).
    bobLogin = await loginFor(node, 'acme', 'bob');
    // Access tokens of 4 s (the settings API's floor is 60 s), so that expiry happens within the test.
    await node.infra.mongo
      .tenantDb('acme')
      .models.TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'security.session.accessTokenTtlSeconds': 4 } })
      .exec();
    node.services.auth.rules.forget('acme');
    const fetch = tenantFetch(node.url!, 'acme');
    api = createRestClient({
      baseUrl: `http://acme.localhost:${new URL(node.url!).port}`,
      fetch: (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (new URL(url).pathname === '/api/account/refresh') refreshes += 1;
        return fetch(input, init);
      },
    });
  });
  afterAll(async () => {
    for (const h of hubs) h.close();
    await node.destroy();
  });

  it('refreshes before expiry once, however many calls wait for the token', async () => {
    const login = await loginFor(node, 'acme', 'alice');
    const session = new Session(login);
    const before = refreshes;
    const tokens = await Promise.all(Array.from({ length: 1000 }, () => session.freshToken(api, 10_000)));
    expect(refreshes - before).toBe(1);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(login.accessToken);
    // Still fresh: no further refresh.
    await session.freshToken(api, 1_000);
    expect(refreshes - before).toBe(1);
  });

  /**
   * A hub client whose token requests wait between `hold()` and `release()`, so a test can act while it
   * is away. Every request made while held waits on the same barrier: a release frees them all, whether
   * the reconnection asked before or after the periodic hand-over did, or has not asked yet.
   */
  function gated(session: Session, refreshEveryMs: number) {
    let barrier: Promise<void> = Promise.resolve();
    let open = () => undefined as void;
    const gate = {
      hold: () => void (barrier = new Promise<void>((r) => (open = r))),
      release: () => open(),
    };
    const hub = new HubClient({
      url: `http://127.0.0.1:${new URL(node.url!).port}`,
      token: async () => {
        await barrier;
        return session.freshToken(api, 1_500);
      },
      refreshEveryMs,
      socket: {
        transports: ['websocket'],
        extraHeaders: { host: `acme.localhost:${new URL(node.url!).port}` },
        reconnectionDelay: 50,
        reconnectionDelayMax: 200,
      },
    });
    hubs.push(hub);
    return { hub, gate };
  }

  it('comes back after token_expired and after a transport close with a fresh token, and gets each missed push once', async () => {
    const session = new Session(await loginFor(node, 'acme', 'alice'));
    const phone = gated(session, 0);
    // The tablet hands the connection a fresh token every 500 ms: it stays connected and shows what was pushed.
    const tablet = gated(session, 500);
    const bob = gated(new Session(bobLogin), 0);
    const calls: string[] = [];
    const resyncs: unknown[] = [];
    phone.hub.on('onNewCall', (p) => calls.push(p.call.callId));
    phone.hub.on('resyncRequired', (p) => resyncs.push(p));
    await phone.hub.connect();
    await tablet.hub.connect();
    await bob.hub.connect();
    const firstToken = session.token();

    // 1. The phone's token expires: the hub ends its session; a call rings meanwhile.
    phone.gate.hold();
    const ended = await phone.hub.next('sessionEnded', () => true, 20_000);
    expect(ended.code).toBe('token_expired');
    const c1 = await bob.hub.call('initCall', { calleeIds: [aliceId], callType: 'audio' });
    await tablet.hub.next('onNewCall', (p) => p.call.callId === c1.callId);
    expect(calls).toEqual([]);
    const back = phone.hub.next('pushStreams', () => true, 20_000);
    phone.gate.release();
    await back;
    await phone.hub.next('onNewCall', (p) => p.call.callId === c1.callId);
    expect(calls).toEqual([c1.callId]);
    expect(session.token()).not.toBe(firstToken);

    // 2. The transport closes (a network drop): socket.io reconnects; a call rings meanwhile.
    phone.gate.hold();
    const dropped = new Promise((r) => phone.hub.socket.once('disconnect', r));
    phone.hub.socket.io.engine.close();
    await dropped;
    const c2 = await bob.hub.call('initCall', { calleeIds: [aliceId], callType: 'audio' });
    await tablet.hub.next('onNewCall', (p) => p.call.callId === c2.callId);
    const again = phone.hub.next('pushStreams', () => true, 20_000);
    phone.gate.release();
    await again;
    await phone.hub.next('onNewCall', (p) => p.call.callId === c2.callId);
    // A later push arrives live after the replayed one: nothing twice, nothing out of order.
    const c3 = await bob.hub.call('initCall', { calleeIds: [aliceId], callType: 'audio' });
    await phone.hub.next('onNewCall', (p) => p.call.callId === c3.callId);
    expect(calls).toEqual([c1.callId, c2.callId, c3.callId]);
    expect(resyncs).toEqual([]);
    void bobId;
  }, 60_000);

  it('surfaces resyncRequired when more was missed than the history holds', async () => {
    const session = new Session(await loginFor(node, 'acme', 'alice'));
    const phone = gated(session, 500);
    const tablet = gated(session, 500);
    const bob = gated(new Session(bobLogin), 0);
    const calls: string[] = [];
    phone.hub.on('onNewCall', (p) => calls.push(p.call.callId));
    await phone.hub.connect();
    await tablet.hub.connect();
    await bob.hub.connect();
    phone.gate.hold();
    const dropped = new Promise((r) => phone.hub.socket.once('disconnect', r));
    phone.hub.socket.io.engine.close();
    await dropped;
    for (let i = 0; i < 5; i++) {
      const c = await bob.hub.call('initCall', { calleeIds: [aliceId], callType: 'audio' });
      await tablet.hub.next('onNewCall', (p) => p.call.callId === c.callId);
    }
    const resync = phone.hub.next('resyncRequired', () => true, 20_000);
    const streams = phone.hub.next('pushStreams', () => true, 20_000);
    phone.gate.release();
    expect(await resync).toMatchObject({ code: 'resync_required', stream: `u:${aliceId}` });
    await streams;
    expect(calls).toEqual([]);
  }, 60_000);
});
