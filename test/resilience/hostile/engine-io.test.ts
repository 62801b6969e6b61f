import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, tokenFor } from '../../support/auth.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv, uniqueId } from '../../support/env.js';
import {
  openPolling,
  pollingPath,
  rawExchange,
  rawRequest,
  seededRandom,
  statusOf,
  upgradeRequest,
  wsFrame,
  type RawExchange,
} from '../../support/engine-io.js';
import { request } from '../../support/http.js';
import { call, connect, must, recorder, type HubClient } from '../../support/hub-client.js';
import { startTestNode, type TestNode } from '../../support/node.js';

const SOAK = process.env.SOAK === '1' ? 5 : 1;
const MAX_BUFFER = 256 * 1024;

/** Runs thunks with at most `limit` in flight. */
async function pool<T>(thunks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out: T[] = new Array(thunks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < thunks.length) {
        const i = next++;
        out[i] = await thunks[i]!();
      }
    }),
  );
  return out;
}

/**
 * Hostile engine.io and Socket.IO traffic against a hub running as a process of its own: malformed
 * handshakes, polling sequences out of order, oversized and binary bodies, half-closed connections,
 * concurrent long-polls on one session, upgrades with bad session ids and protocol-violating websocket
 * frames. Every input is generated from a fixed seed. The node must answer each with a 4xx or by
 * closing the connection, never exit, log no unexpected error, and keep serving a normal client and a
 * client of another tenant that stayed connected throughout.
 */
describe('hub under malformed engine.io and Socket.IO traffic', () => {
  const id = uniqueId();
  const shared = { MONGODB_CATALOG_DB: `tc_${id}`, MONGODB_TENANT_DB_PREFIX: `tt_${id}_`, REDIS_PREFIX: `test:${id}:` };
  /** Inputs drawn from a fixed seed; each polling session draws from its own, so interleaving changes nothing. */
  const generator = (seed: number) => {
    const r = seededRandom(seed);
    return {
      rnd: r,
      junk: (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256))),
      pick: <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!,
    };
  };
  const { rnd, junk, pick } = generator(1313);
  let admin: TestNode;
  let child: ChildNode;
  let port: number;
  let host: string;
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const open: HubClient[] = [];
  let witness: HubClient;
  let witnessDisconnects = 0;
  /** Every raw exchange's outcome, checked in one place. */
  const outcomes: { label: string; status: number; closed: boolean }[] = [];

  const record = (label: string, r: RawExchange) => {
    outcomes.push({ label, status: statusOf(r.received), closed: r.closed });
    return r;
  };

  beforeAll(async () => {
    admin = await startTestNode({ ...shared, ROLES: 'http' });
    for (const [t, u, role] of [
      ['acme', 'alice', 'clinician'],
      ['acme', 'pat', 'patient'],
      ['globex', 'gina', 'clinician'],
    ] as const) {
      ids[u] = await createUser(admin, t, { username: u, role });
      tokens[u] = await tokenFor(admin, t, u);
    }
    // Rate limits raised so the barrage reaches the protocol code instead of the limiter.
    child = await spawnChildNode(
      testEnv({ ...shared, ROLES: 'http,hub,actors', NODE_ID: `hostile-eio-${id}`, RATE_LIMIT_PER_IP: '100000' }),
      60_000,
    );
    port = Number(new URL(child.url).port);
    host = `acme.localhost:${port}`;
    witness = await connect(child.url, 'globex', { transport: 'default', token: tokens.gina });
    open.push(witness);
    witness.on('disconnect', () => witnessDisconnects++);
  }, 90_000);
  afterAll(async () => {
    for (const s of open) s.close();
    if (child && child.proc.exitCode === null) await child.stop();
    await admin?.destroy();
  });

  it('answers malformed handshakes with a 4xx, whatever the method, query and host', async () => {
    const queries = [
      '',
      '?',
      '?EIO=4',
      '?transport=polling',
      '?EIO=3&transport=polling',
      '?EIO=5&transport=polling',
      '?EIO=x&transport=polling',
      '?EIO=4&transport=foo',
      '?EIO=4&transport=websocket',
      '?EIO=4&transport=polling&sid=unknown',
      '?EIO=4&transport=polling&sid=..%2F..%2Fetc',
      `?EIO=4&transport=polling&sid=${'a'.repeat(4000)}`,
      '?EIO=4&transport=polling&j=0',
      '?EIO=4&transport=polling&b64=1&t=%zz',
      '?EIO=4&EIO=3&transport=polling&transport=websocket',
      '?EIO=4&transport=webtransport',
      '?EIO[]=4&transport[a]=polling',
    ];
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'HEAD'];
    const hosts = [host, `nobody.localhost:${port}`, `127.0.0.1:${port}`];
    const cases: (() => Promise<unknown>)[] = [];
    for (const q of queries)
      for (const m of methods)
        for (const h of hosts) {
          const body = m === 'GET' || m === 'HEAD' ? '' : pick(['', '40', junk(64), 'x'.repeat(1000)]);
          cases.push(async () =>
            record(
              `${m} ${q.slice(0, 40)} ${h}`,
              await rawExchange(port, [rawRequest(m, `/hubs/mobile/${q}`, h, body)], { readMs: 1500 }),
            ),
          );
        }
    for (const path of [
      '/hubs/mobile',
      '/hubs/mobile//',
      '/hubs/mobile/%ff%fe',
      '/hubs/mobile/../../etc/passwd',
      `/hubs/mobile/${'x'.repeat(8000)}`,
      '/hubs/mobilex/?EIO=4&transport=polling',
    ]) {
      cases.push(async () =>
        record(`GET ${path.slice(0, 40)}`, await rawExchange(port, [rawRequest('GET', path, host)], { readMs: 1500 })),
      );
    }
    await pool(cases, 8);
    expect(cases.length).toBeGreaterThanOrEqual(300);
    expect(child.proc.exitCode).toBeNull();
  });

  it('survives out-of-order, oversized, binary, concurrent and half-closed long-polling sequences on live sessions', async () => {
    const sessions = 40 * SOAK;
    const steps: string[] = [];
    const one = async (n: number) => {
      const { rnd, junk, pick } = generator(20_000 + n);
      const s = await openPolling(child.url, 'acme');
      const path = pollingPath(s.sid);
      const post = (body: Buffer | string, headers: Record<string, string> = {}) =>
        rawExchange(
          port,
          [rawRequest('POST', path, host, body, { 'content-type': 'text/plain;charset=UTF-8', ...headers })],
          { readMs: 1500 },
        );
      // A long-poll GET waits for the next packet (up to the ping interval): read briefly, then drop it.
      const get = () => rawExchange(port, [rawRequest('GET', path, host)], { readMs: 300 });
      const actions: [string, () => Promise<RawExchange | RawExchange[]>][] = [
        ['post-before-connect', () => post(`421${JSON.stringify(['initCall', { calleeIds: [ids.pat] }])}`)],
        [
          'connect-twice',
          async () => [
            await post(`40${JSON.stringify({ token: tokens.alice })}`),
            await post(`40${JSON.stringify({ token: tokens.alice })}`),
          ],
        ],
        ['connect-bad-token', () => post('40{"token":"not.a.token"}')],
        ['connect-other-namespace', () => post('40/admin,{}')],
        ['upgrade-packet-over-polling', () => post('5')],
        ['probe-over-polling', () => post('2probe')],
        ['close-packet', () => post('1')],
        ['unknown-packet-types', () => post(['9', '7x', '4', '49', '4-', '46'].join('\x1e'))],
        [
          'bad-json-event',
          () =>
            post(
              pick([
                '42[',
                '42{"a":1}',
                '42[1,2,3]',
                '42[null]',
                '42["initCall"',
                `42${'['.repeat(2000)}`,
                '429999999999999999999999["initCall",{}]',
              ]),
            ),
        ],
        ['binary-placeholder-without-attachment', () => post('451-["initCall",{"_placeholder":true,"num":7}]')],
        ['base64-binary-junk', () => post(`b${junk(200).toString('latin1')}`)],
        ['raw-binary-body', () => post(junk(2048), { 'content-type': 'application/octet-stream' })],
        ['invalid-utf8', () => post(Buffer.from([0x34, 0x32, 0xff, 0xfe, 0xc0, 0xaf]))],
        ['oversized', () => post(Buffer.alloc(MAX_BUFFER + 1 + Math.floor(rnd() * 4096), 0x61))],
        ['many-packets', () => post(Array.from({ length: 2000 }, () => '6').join('\x1e'))],
        ['concurrent-gets', () => Promise.all([get(), get(), get()])],
        ['get-then-drop', () => rawExchange(port, [rawRequest('GET', path, host)], { destroyAfterWrite: true })],
        [
          'half-closed-post',
          () =>
            rawExchange(
              port,
              [
                rawRequest('POST', path, host, '', { 'content-length': '5000', 'content-type': 'text/plain' }),
                '42["initCall"',
              ],
              { halfClose: true, readMs: 1500 },
            ),
        ],
        [
          'truncated-headers',
          () =>
            rawExchange(port, [`POST ${path} HTTP/1.1\r\nhost: ${host}\r\ncontent-len`], {
              halfClose: true,
              readMs: 1500,
            }),
        ],
        [
          'chunked-junk',
          () =>
            rawExchange(
              port,
              [
                `POST ${path} HTTP/1.1\r\nhost: ${host}\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n${junk(10).toString('latin1')}\r\n`,
              ],
              { halfClose: true, readMs: 1500 },
            ),
        ],
        ['get', get],
      ];
      for (let i = 0; i < 6; i++) {
        const [label, act] = n % 7 === 0 && i === 0 ? actions[0]! : pick(actions);
        const results = await act();
        for (const r of [results].flat()) record(`session ${n} ${label}`, r);
        steps.push(label);
      }
    };
    await pool(
      Array.from({ length: sessions }, (_, n) => () => one(n)),
      8,
    );
    expect(steps.length).toBe(sessions * 6);
    expect(child.proc.exitCode).toBeNull();
  });

  it('refuses websocket upgrades with bad session ids or headers and survives protocol-violating frames', async () => {
    const upgraded = (r: Buffer) => r.includes('\r\n\r\n');
    const cases: (() => Promise<unknown>)[] = [];
    const bad: [string, string][] = [
      ['unknown-sid', upgradeRequest(host, 'not-a-session')],
      ['long-sid', upgradeRequest(host, 'x'.repeat(5000))],
      ['no-key', upgradeRequest(host, undefined, '')],
      ['bad-key', upgradeRequest(host, undefined, '!!!')],
      ['bad-version', upgradeRequest(host).replace('sec-websocket-version: 13', 'sec-websocket-version: 99')],
      ['unknown-tenant', upgradeRequest(`nobody.localhost:${port}`)],
      ['outside-hub', upgradeRequest(host).replace('/hubs/mobile/', '/api/')],
    ];
    for (const [label, req] of bad)
      cases.push(async () =>
        record(`upgrade ${label}`, await rawExchange(port, [req], { readMs: 1500, until: upgraded })),
      );
    // An upgrade with the sid of a live polling session, followed by junk instead of the probe.
    for (let i = 0; i < 10 * SOAK; i++) {
      const bytes = junk(64);
      cases.push(async () => {
        const s = await openPolling(child.url, 'acme');
        return record(
          'upgrade live sid then junk',
          await rawExchange(port, [upgradeRequest(host, s.sid), wsFrame(bytes, { opcode: 2 }), wsFrame('5')], {
            readMs: 800,
          }),
        );
      });
    }
    const frames = (): Buffer[] => {
      const token = tokens.alice!;
      return pick<() => Buffer[]>([
        () => [wsFrame(junk(1 + Math.floor(rnd() * 512)), { opcode: 2 })],
        () => [wsFrame(junk(64).toString('latin1'))],
        () => [wsFrame(Buffer.alloc(MAX_BUFFER + 1024, 0x34))],
        () => [wsFrame('40', { unmasked: true })],
        () => [wsFrame('40', { rsv: 7 })],
        () => [wsFrame('4', { opcode: 3 + Math.floor(rnd() * 5) })],
        () => [wsFrame(Buffer.from([0x34, 0x32, 0xff, 0xfe]))],
        () => [wsFrame('4', { fin: false }), wsFrame('0', { opcode: 1 })],
        () => [wsFrame('', { opcode: 8 }), wsFrame('40')],
        () => [
          wsFrame(`40${JSON.stringify({ token })}`),
          wsFrame(
            pick([
              '42[',
              '42[1]',
              '42{}',
              `42${'['.repeat(3000)}`,
              '421["initCall"]',
              '4299999999999999999999["initCall",{}]',
            ]),
          ),
        ],
        () => [
          wsFrame(`40${JSON.stringify({ token })}`),
          wsFrame('451-["initCall",{"_placeholder":true,"num":3}]'),
          wsFrame(junk(32), { opcode: 2 }),
        ],
        () => [
          wsFrame(`40${JSON.stringify({ token })}`),
          wsFrame(
            `42${JSON.stringify(['initCall', { calleeIds: Array.from({ length: 5000 }, () => 'a'.repeat(24)) }])}`,
          ),
        ],
        () => [wsFrame(`42${JSON.stringify(['initCall', { calleeIds: [ids.pat] }])}`)],
        () => [wsFrame('40/admin,{}'), wsFrame('41'), wsFrame('40'), wsFrame('40')],
        () => [wsFrame('1'), wsFrame('2probe'), wsFrame('5'), wsFrame('6')],
      ])();
    };
    for (let i = 0; i < 120 * SOAK; i++) {
      const f = frames();
      cases.push(async () =>
        record('websocket frames', await rawExchange(port, [upgradeRequest(host), ...f], { readMs: 600 })),
      );
    }
    await pool(cases, 8);
    expect(cases.length).toBeGreaterThanOrEqual(130);
    expect(child.proc.exitCode).toBeNull();
  });

  it('answered every hostile request below 500 and logged no unexpected error', () => {
    expect(outcomes.length).toBeGreaterThanOrEqual(600);
    const server = outcomes.filter((o) => o.status >= 500);
    const byStatus = new Map<string, number>();
    for (const o of outcomes)
      byStatus.set(
        o.status ? String(o.status) : o.closed ? 'closed' : 'open',
        (byStatus.get(o.status ? String(o.status) : o.closed ? 'closed' : 'open') ?? 0) + 1,
      );
    console.log(
      `engine.io hostile: ${outcomes.length} exchanges, ${server.length} 5xx; answers ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`,
    );
    expect(server).toEqual([]);
    expect(child.stderr()).not.toMatch(/Error|uncaught|unhandled/i);
    expect(child.logs.filter((l) => Number(l.level) >= 50 || l.level === 'error' || l.level === 'fatal')).toEqual([]);
  });

  it("still serves a normal client, and the other tenant's client stayed connected throughout", async () => {
    expect(child.proc.exitCode).toBeNull();
    expect((await request(child.url, 'GET', '/healthz')).status).toBe(200);
    const alice = await connect(child.url, 'acme', { transport: 'default', token: tokens.alice });
    const pat = await connect(child.url, 'acme', { transport: 'polling', token: tokens.pat });
    open.push(alice, pat);
    const rp = recorder(pat);
    const info = await must(alice, 'initCall', { calleeIds: [ids.pat] });
    expect((await rp.next('onNewCall', (p) => p.call.callId === info.callId)).call.callerId).toBe(ids.alice);
    expect(witness.connected).toBe(true);
    expect(witnessDisconnects).toBe(0);
    expect(await call(witness, 'acceptCall', { callId: '5b3a2e4c-8d1f-4a6b-9c0d-1e2f3a4b5c6d' })).toMatchObject({
      ok: false,
      error: { code: 'call_not_found' },
    });
  });
});
