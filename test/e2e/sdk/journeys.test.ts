import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, freePort, registerHardware, tokenFor } from '../../support/auth.js';
import { Browser, followAuthorization } from '../../support/realm.js';
import { png, xlsx } from '../../support/form.js';
import { sdkHub, sdkRest, tenantFetch } from '../../support/sdk.js';
import {
  approveQrLogin,
  beginCodeSignIn,
  body,
  completeCodeSignIn,
  ConsultError,
  createQrLogin,
  createRestClient,
  getQrLoginCode,
  HubClient,
  issueOfflineToken,
  pollQrLogin,
  refuseQrLogin,
  Session,
  signInOffline,
  signInWithPin,
} from '../../../packages/client/src/index.js';

const inHours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();

/** The journeys of packages/client/README.md, through the SDK against a real node (REST, hub, actors). */
describe('client SDK journeys against the service', () => {
  let node: TestNode;
  let base: string;
  let alice: string;
  let bob: string;
  let bobId: string;
  let headset: string;
  let admin: string;
  const hubs: HubClient[] = [];

  beforeAll(async () => {
    const port = await freePort();
    node = await startTestNode({
      ROLES: 'http,hub,actors,workers,idp',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
    });
    base = node.url!;
    await createUser(node, 'acme', {
      username: 'alice',
      role: 'clinician',
      displayName: 'Dr Alice',
      password: 'alice-realm-password',
    });
    bobId = await createUser(node, 'acme', { username: 'bob', role: 'clinician', displayName: 'Dr Bob' });
    alice = await tokenFor(node, 'acme', 'alice');
    bob = await tokenFor(node, 'acme', 'bob');
    const headsetId = await createUser(node, 'acme', { username: 'ward3-headset', role: 'device', kind: 'device' });
    // The ward's administrator registered the headset's hardware id to its account (decision 1041).
    await registerHardware(node, 'acme', 'HS-WARD3-01', headsetId);
    headset = await tokenFor(node, 'acme', 'ward3-headset');
    await createUser(node, 'acme', { username: 'root', role: 'admin' });
    admin = await tokenFor(node, 'acme', 'root');
  });
  afterAll(async () => {
    for (const h of hubs) h.close();
    await node?.destroy();
  });
  const hub = (token: () => string, opts?: Parameters<typeof sdkHub>[3]) => {
    const h = sdkHub(base, 'acme', token, opts);
    hubs.push(h);
    return h;
  };

  it('sign-in: PIN, QR login approved by a web user, offline token; refusals are typed errors', async () => {
    const asAlice = sdkRest(base, 'acme', () => alice);
    await asAlice.POST('/api/account/resetPin', { body: { newPin: '482913' } });
    const anon = sdkRest(base, 'acme');
    const pin = await signInWithPin(anon, 'alice', '482913');
    expect(pin.user.username).toBe('alice');

    const wrong = await signInWithPin(anon, 'alice', '000000').catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(ConsultError);
    expect((wrong as ConsultError).code).toBe('invalid_credentials');

    const qr = await createQrLogin(anon, 'Ward 3 headset');
    const polled = pollQrLogin(anon, qr, { intervalMs: 50 });
    await approveQrLogin(asAlice, qr.code);
    expect((await polled).user.username).toBe('alice');

    const offline = await issueOfflineToken(
      sdkRest(base, 'acme', () => pin.accessToken),
      'ward-tablet',
    );
    const session = await signInOffline(anon, offline.token);
    expect(session.user.username).toBe('alice');
  });

  it('QR login refused: the web user sees which device asks, refuses, the polling device gets 403 login_code_refused', async () => {
    const anon = sdkRest(base, 'acme');
    const asBob = sdkRest(base, 'acme', () => bob);
    const qr = await createQrLogin(anon, 'Ward 5 headset');
    const info = await getQrLoginCode(asBob, qr.code);
    expect(info).toMatchObject({ code: qr.code, status: 'pending', deviceName: 'Ward 5 headset' });
    expect(info.requestedFrom.ip).toBeTruthy();
    expect(Date.parse(info.expiresAt)).toBeGreaterThan(Date.now());

    const polled = pollQrLogin(anon, qr, { intervalMs: 50 }).catch((e: unknown) => e);
    expect(await refuseQrLogin(asBob, qr.code)).toEqual({
      code: qr.code,
      status: 'refused',
      deviceName: 'Ward 5 headset',
    });
    const refused = await polled;
    expect(refused).toBeInstanceOf(ConsultError);
    expect(refused).toMatchObject({ code: 'login_code_refused', status: 403 });
    expect((await getQrLoginCode(asBob, qr.code)).status).toBe('refused');
    // Final: neither approved nor refused again afterwards.
    const approved = await approveQrLogin(asBob, qr.code).catch((e: unknown) => e);
    expect(approved).toMatchObject({ code: 'login_code_refused', status: 403 });
    const again = await refuseQrLogin(asBob, qr.code).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: 'login_code_refused', status: 403 });

    const unknown = await getQrLoginCode(asBob, 'ZZZZZZZZ').catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: 'login_code_not_found', status: 404 });
    // Only a signed-in user may look at a code or decide on it.
    const signedOut = await getQrLoginCode(anon, qr.code).catch((e: unknown) => e);
    expect(signedOut).toMatchObject({ code: 'unauthenticated', status: 401 });
  });

  it('sign-in in a browser: the code flow with PKCE at the tenant realm, completed by the service', async () => {
    const redirectUri = `${base}/auth/callback`;
    const start = await beginCodeSignIn({
      issuer: node.services.auth.realms.issuerFor('acme'),
      clientId: node.config.auth.oidc.clientId,
      redirectUri,
      scope: 'openid profile email api',
      allowHttp: true,
    });
    expect(start.url.searchParams.get('code_challenge_method')).toBe('S256');
    const callbackUrl = await followAuthorization(new Browser(base), start.url.href, redirectUri, {
      username: 'alice',
      password: 'alice-realm-password',
    });
    const session = await completeCodeSignIn(sdkRest(base, 'acme'), start, callbackUrl!);
    expect(session.user.username).toBe('alice');
    const replay = await completeCodeSignIn(sdkRest(base, 'acme'), start, callbackUrl!).catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(ConsultError);
  });

  it('contacts and events: me, search, an event created, read back and listed', async () => {
    const api = sdkRest(base, 'acme', () => alice);
    const me = await body(api.GET('/api/contacts/me'));
    expect(me.displayName).toBe('Dr Alice');
    const found = await body(api.GET('/api/contacts/get', { params: { query: { name: 'Bob' } } }));
    expect(JSON.stringify(found)).toContain('Dr Bob');
    const created = await body(
      api.POST('/api/events/create', {
        body: { name: 'SDK review', startAt: inHours(1), endAt: inHours(2), participants: [{ userId: bobId }] },
      }),
    );
    const event = await body(api.GET('/api/events/get/{eventId}', { params: { path: { eventId: created.id } } }));
    expect(event.name).toBe('SDK review');
    const list = await body(api.GET('/api/events/get', { params: { query: { name: 'SDK' } } }));
    expect(JSON.stringify(list)).toContain(created.id);
    const missing = await api
      .GET('/api/events/get/{eventId}', { params: { path: { eventId: 'a'.repeat(24) } } })
      .catch((e: unknown) => e);
    expect((missing as ConsultError).code).toBe('event_not_found');
  });

  it('a call: initCall rings the callee, acceptCall, endCall; negative acks are typed errors', async () => {
    const a = await hub(() => alice).connect();
    const b = await hub(() => bob).connect();
    const ringing = b.next('onNewCall');
    const call = await a.call('initCall', { calleeIds: [bobId], callType: 'video' });
    expect(call.status).toBe('ringing');
    expect((await ringing).call.callId).toBe(call.callId);
    expect((await b.call('acceptCall', { callId: call.callId })).status).toBe('active');
    const ended = b.next('onEndCall', (p) => p.callId === call.callId);
    await a.call('endCall', { callId: call.callId });
    expect((await ended).status).toBe('ended');
    const refused = await a.call('acceptCall', { callId: call.callId }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConsultError);
    expect((refused as ConsultError).code).toBe('invalid_state');
  });

  it('calls made while the connection is down: a timed-out one is never sent, close() fails the others at once', async () => {
    const a = await hub(() => alice, { ackTimeoutMs: 300 }).connect();
    a.socket.disconnect();
    const late = await a.call('initCall', { calleeIds: [bobId], callType: 'video' }).catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'timeout' });
    expect(a.socket.sendBuffer).toHaveLength(0);
    // With the default timeout (15 s), closing the client fails the waiting call now and leaves no timer
    // behind (the file's leak check fails on a pending timer).
    const b = await hub(() => bob).connect();
    b.socket.disconnect();
    const waiting = b.call('initCall', { calleeIds: [bobId], callType: 'video' }).catch((e: unknown) => e);
    b.close();
    expect(await waiting).toMatchObject({ code: 'service_unavailable' });
    expect(await b.call('initCall', { calleeIds: [bobId], callType: 'video' }).catch((e: unknown) => e)).toMatchObject({
      code: 'service_unavailable',
    });
    // The client the first call belonged to still works once connected again.
    a.socket.connect();
    await new Promise((r) => a.socket.once('connect', () => r(undefined)));
    const c = await hub(() => bob).connect();
    const ringing = c.next('onNewCall');
    const call = await a.call('initCall', { calleeIds: [bobId], callType: 'video' });
    expect((await ringing).call.callId).toBe(call.callId);
    await a.call('cancelCall', { callId: call.callId });
  });

  it('upload: a PNG through /api/media/upload as multipart', async () => {
    const api = sdkRest(base, 'acme', () => alice);
    const form = new FormData();
    form.append('file', new Blob([await png(32, 32)], { type: 'image/png' }), 'scan.png');
    // The typed body names the form's fields; the serializer sends the multipart form itself.
    const uploaded = await body(
      api.POST('/api/media/upload', { body: { file: 'scan.png' }, bodySerializer: () => form }),
    );
    expect(JSON.stringify(uploaded)).toMatch(/[a-f0-9]{64}/);
  });

  it('a meeting with a headset: the host starts it, the headset joins by code, is controlled and shows a peripheral', async () => {
    const api = sdkRest(base, 'acme', () => alice);
    const event = await body(
      api.POST('/api/events/create', {
        body: { name: 'Ward round', startAt: inHours(0), endAt: inHours(1), participants: [{ userId: bobId }] },
      }),
    );
    const host = await hub(() => alice).connect();
    const device = await hub(() => headset).connect();
    await host.call('initEvent', { eventId: event.id });
    const added = host.next('onDeviceAdded', (d) => d.eventId === event.id);
    const info = await device.call('initRapidConnect', 'HS-WARD3-01', event.meetingCode);
    expect(info).toMatchObject({ deviceId: 'HS-WARD3-01', meetingId: event.id });
    expect((await added).deviceId).toBe('HS-WARD3-01');
    await host.call('requestRemote', event.id, 'HS-WARD3-01');
    const command = device.next('onRemoteControl', (c) => c.command === 'zoomIn');
    const ack = await host.call('remoteControl', event.id, {
      deviceId: 'HS-WARD3-01',
      command: 'zoomIn',
      params: { level: 2 },
    });
    expect((await command).commandId).toBe((ack as { commandId: string }).commandId);
    const started = device.next('peripheralStarted');
    await host.call('startPeripheral', {
      eventId: event.id,
      deviceId: 'HS-WARD3-01',
      peripheralId: 'steth-1',
      peripheralType: 'stethoscope',
    });
    expect(await started).toMatchObject({ peripheralId: 'steth-1' });
    const refused = await device.call('initRapidConnect', 'HS-WARD3-01', 'NOT-A-CODE').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConsultError);
  });

  it('import: an admin uploads a pending-users sheet and reads the finished import with its row errors', async () => {
    const api = sdkRest(base, 'acme', () => admin);
    const sheet = await xlsx([
      ['username', 'displayName', 'role', 'email'],
      ['sdk.nurse', 'Nurse One', 'clinician', 'one@clinic.org'],
      ['sdk.patient', 'Pat Two', 'patient', ''],
      ['bad name', 'X', 'clinician', ''],
    ]);
    const form = new FormData();
    form.append(
      'file',
      new Blob([new Uint8Array(sheet)], { type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' }),
      'users.xlsx',
    );
    const started = await body(
      api.POST('/api/uploads/pendingUsers', { body: { file: 'users.xlsx' }, bodySerializer: () => form }),
    );
    await node.infra.queues.waitUntilFinished('pending-user-import', `import.acme.${started.importId}`, 60_000);
    const done = await body(
      api.GET('/api/uploads/pendingUsers/{importId}', { params: { path: { importId: started.importId } } }),
    );
    expect(done).toMatchObject({ status: 'completed', rowsTotal: 3, rowsImported: 2, rowErrorCount: 1 });
    const asClinician = await sdkRest(base, 'acme', () => alice)
      .POST('/api/uploads/pendingUsers', { body: { file: 'users.xlsx' }, bodySerializer: () => form })
      .catch((e: unknown) => e);
    expect((asClinician as ConsultError).code).toBe('permission_denied');
  });

  it('the hub connection refreshes its token and re-joins its meeting after a reconnection', async () => {
    const api = sdkRest(base, 'acme', () => alice);
    const event = await body(
      api.POST('/api/events/create', {
        body: { name: 'Rejoin', startAt: inHours(0), endAt: inHours(1), participants: [{ userId: bobId }] },
      }),
    );
    let token = alice;
    const h = await hub(() => token, { refreshEveryMs: 0 }).connect();
    await h.call('initEvent', { eventId: event.id });
    token = await tokenFor(node, 'acme', 'alice');
    expect((await h.refreshToken()).role).toBe('clinician');
    const rejoined = h.whenRejoined();
    h.socket.io.engine.close();
    expect(await rejoined).toEqual([]);
    const b = await hub(() => bob).connect();
    const seen = h.next('meetingEvent', (p) => p.type === 'participantJoined' && p.by === bobId);
    await b.call('joinEvent', { eventId: event.id });
    expect((await seen).eventId).toBe(event.id);
  });

  it('a session refreshes its access token with the rotating refresh token', async () => {
    const anon = sdkRest(base, 'acme');
    const qr = await createQrLogin(anon);
    const polled = pollQrLogin(anon, qr, { intervalMs: 50 });
    await approveQrLogin(
      sdkRest(base, 'acme', () => alice),
      qr.code,
    );
    const session = new Session(await polled);
    const api = sdkRest(base, 'acme', session.token);
    const first = session.token();
    await session.refresh(api);
    expect(session.token()).not.toBe(first);
    expect((await body(api.GET('/api/contacts/me'))).displayName).toBe('Dr Alice');
  });

  it('a token asked for a connection attempt that closed before it came is not sent on the next one (one socket per connection)', async () => {
    let gate: Promise<void> = Promise.resolve();
    let asks = 0;
    let asked: () => void = () => undefined;
    const h = hub((async () => {
      asks++;
      asked();
      await gate;
      return alice;
    }) as unknown as () => string);
    await h.connect();
    const untilAsks = async (n: number) => {
      while (asks < n) await new Promise<void>((r) => (asked = r));
    };
    let release: () => void = () => undefined;
    gate = new Promise<void>((r) => (release = r));
    // The connection drops; the attempt after it asks for a token, and drops too before the token came.
    h.socket.io.engine.close();
    await untilAsks(2);
    h.socket.io.engine.close();
    await untilAsks(3);
    // Both tokens come now, while the third attempt's transport is open: only its own answer is sent.
    // Socket.IO's CONNECT packet of the default namespace: '0' and its auth.
    let connects = 0;
    h.socket.io.engine.on('packetCreate', (p: { type: string; data?: unknown }) => {
      if (p.type === 'message' && typeof p.data === 'string' && p.data.startsWith('0{')) connects++;
    });
    const back = new Promise<void>((r) => h.socket.once('connect', () => r()));
    release();
    await back;
    expect(connects).toBe(1);
    h.close();
  });

  it('a live hub connection is handed the current token every refreshEveryMs, and a refused hand-over is reported', async () => {
    let token = alice;
    let asked = 0;
    const refreshed: { role: string; expiresAt?: string }[] = [];
    const errors: unknown[] = [];
    let wake: () => void = () => undefined;
    const h = await hub(() => (asked++, token), {
      refreshEveryMs: 100,
      onTokenRefreshed: (r) => (refreshed.push(r), wake()),
      onRefreshError: (e) => (errors.push(e), wake()),
    }).connect();
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise<void>((r) => (wake = r));
    };
    await until(() => refreshed.length >= 2);
    expect(asked).toBeGreaterThanOrEqual(3);
    expect(refreshed[0]).toMatchObject({ role: 'clinician', expiresAt: expect.any(String) });
    token = 'not-a-token';
    await until(() => errors.length >= 1);
    expect(errors[0]).toBeInstanceOf(ConsultError);
    expect((errors[0] as ConsultError).code).toBe('token_invalid');
    // A refused hand-over leaves the connection signed in with the token it had.
    expect(await h.call('sayHiToRoom', 'f'.repeat(24)).catch((e: ConsultError) => e.code)).toBe('forbidden');
    h.close();
  });

  it('a started session refreshes itself every interval and reports each new pair of tokens', async () => {
    const anon = sdkRest(base, 'acme');
    const qr = await createQrLogin(anon);
    const polled = pollQrLogin(anon, qr, { intervalMs: 50 });
    await approveQrLogin(
      sdkRest(base, 'acme', () => alice),
      qr.code,
    );
    const seen: { accessToken: string; refreshToken?: string }[] = [];
    let wake: () => void = () => undefined;
    const errors: unknown[] = [];
    const session = new Session(await polled, {
      onRefreshed: (t) => (seen.push(t), wake()),
      onError: (e) => (errors.push(e), wake()),
    });
    const api = sdkRest(base, 'acme', session.token);
    const first = { accessToken: session.token(), refreshToken: session.refreshToken };
    session.start(api, 100);
    while (seen.length < 2 && !errors.length) await new Promise<void>((r) => (wake = r));
    session.stop();
    expect(errors).toEqual([]);
    expect(new Set([first.accessToken, ...seen.map((t) => t.accessToken)]).size).toBe(3);
    expect(new Set([first.refreshToken, ...seen.map((t) => t.refreshToken)]).size).toBe(3);
    expect(session.token()).toBe(seen[seen.length - 1]!.accessToken);
    expect((await body(api.GET('/api/contacts/me'))).displayName).toBe('Dr Alice');
    // Two refreshes asked at once are one: the same rotating token sent twice would end the session as reuse.
    await Promise.all([session.refresh(api), session.refresh(api)]);
    expect(seen).toHaveLength(3);
    expect((await body(api.GET('/api/contacts/me'))).displayName).toBe('Dr Alice');
  });

  it('a started session whose refresh token the service refuses stops refreshing: one request, the refusal reported and kept', async () => {
    let requests = 0;
    const fetch = tenantFetch(base, 'acme');
    const api = createRestClient({
      baseUrl: `http://acme.localhost:${new URL(base).port}`,
      fetch: (input, init) => (requests++, fetch(input, init)),
    });
    const errors: unknown[] = [];
    let wake: () => void = () => undefined;
    // An expired access token and a refresh token the service does not know: it answers invalid_credentials.
    const session = new Session(
      {
        accessToken: alice,
        refreshToken: `rt_${'a'.repeat(16)}.${'b'.repeat(32)}`,
        expiresAt: new Date(Date.now() - 1_000).toISOString(),
      },
      { onError: (e) => (errors.push(e), wake()) },
    );
    session.start(api, 600_000, 1_000);
    while (!errors.length) await new Promise<void>((r) => (wake = r));
    expect((errors[0] as ConsultError).code).toBe('invalid_credentials');
    // The session is over: it says so, and a later refresh fails with the same refusal without asking again.
    await expect(session.refresh(api)).rejects.toBe(errors[0]);
    await expect(session.freshToken(api, 1_000)).rejects.toBe(errors[0]);
    expect(requests).toBe(1);
    expect((session.ended as ConsultError | undefined)?.code).toBe('invalid_credentials');
    expect(errors).toHaveLength(1);
    session.stop();
  });
});
