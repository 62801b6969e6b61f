import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { io } from 'socket.io-client';
import { createUser, tokenFor } from '../../support/auth.js';
import { spawnChildNode, type ChildNode } from '../../support/child-node.js';
import { testEnv, uniqueId } from '../../support/env.js';
import { call, connect, loopbackAgent, type HubClient } from '../../support/hub-client.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { startOtlpCollector } from '../../support/otlp-collector.js';
import { client } from '../../support/http.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const sampled = (traceId: string) => `00-${traceId}-${hex(8)}-01`;

/**
 * A caller's W3C trace context decides sampling only when the caller is a configured proxy address
 * itself (decision 1033). The traced node (a child process: tracing is process-global) samples nothing
 * of its own (TRACING_SAMPLE_RATIO=0) and trusts loopback: a direct loopback caller's sampled traceparent
 * is exported, the same request relayed for an outside client (X-Forwarded-For) starts a trace of its own
 * that is not sampled. REST headers and hub call arguments alike.
 */
describe("a client's traceparent does not decide sampling", () => {
  const id = uniqueId();
  const shared = { MONGODB_CATALOG_DB: `tc_${id}`, MONGODB_TENANT_DB_PREFIX: `tt_${id}_`, REDIS_PREFIX: `test:${id}:` };
  let collector: Awaited<ReturnType<typeof startOtlpCollector>>;
  let setup: TestNode;
  let traced: ChildNode;
  let token: string;
  const open: HubClient[] = [];

  beforeAll(async () => {
    collector = await startOtlpCollector();
    setup = await startTestNode({ ...shared, ROLES: 'http' });
    await createUser(setup, 'acme', { username: 'alice', role: 'clinician' });
    token = await tokenFor(setup, 'acme', 'alice');
    traced = await spawnChildNode(
      testEnv({
        ...shared,
        ROLES: 'http,hub,actors',
        LOG_LEVEL: 'warn',
        TRUST_PROXY: 'loopback',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        TRACING_SAMPLE_RATIO: '0',
        TRACING_EXPORT_DELAY_MS: '100',
      }),
      60_000,
    );
  }, 180_000);

  afterAll(async () => {
    for (const s of open) s.close();
    await traced?.stop();
    await setup?.destroy();
    await collector?.close();
  });

  const outside = { 'x-forwarded-for': '203.0.113.7' };

  it('REST: continues the traceparent of a configured proxy address, not that of a client it relays', async () => {
    const relayed = hex(16);
    const r1 = await client(traced.url).get('/api/tenant/ping', {
      tenant: 'acme',
      headers: { ...outside, traceparent: sampled(relayed) },
    });
    expect(r1.status).toBe(200);
    expect(r1.headers['x-correlation-id']).not.toBe(relayed);
    const direct = hex(16);
    const r2 = await client(traced.url).get('/api/tenant/ping', {
      tenant: 'acme',
      headers: { traceparent: sampled(direct) },
    });
    expect(r2.headers['x-correlation-id']).toBe(direct);
    // The trusted request's span is exported after the relayed one's would have been (one process, one
    // batch queue in order): once it is in, the relayed trace id is known to be absent.
    const spans = await collector.until((all) => all.some((s) => s.traceId === direct));
    expect(spans.filter((s) => s.traceId === relayed)).toEqual([]);
  });

  it("hub: a call's trace argument counts on a socket of a configured proxy address only", async () => {
    const port = new URL(traced.url).port;
    const relayedSocket = io(`http://acme.localhost:${port}`, {
      path: '/hubs/mobile',
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      agent: loopbackAgent as unknown as string,
      auth: { token },
      extraHeaders: outside,
    }) as unknown as HubClient;
    open.push(relayedSocket);
    await new Promise<void>((resolve, reject) => {
      relayedSocket.once('connect', () => resolve());
      relayedSocket.once('connect_error', reject);
    });
    const relayed = hex(16);
    const a = await call(relayedSocket, 'initEvent', { eventId: 'no-such-event' }, { traceparent: sampled(relayed) });
    expect(a.ok).toBe(false);
    const directSocket = await connect(traced.url, 'acme', { token });
    open.push(directSocket);
    const direct = hex(16);
    const b = await call(directSocket, 'initEvent', { eventId: 'no-such-event' }, { traceparent: sampled(direct) });
    expect(b.ok).toBe(false);
    const spans = await collector.until((all) => all.some((s) => s.traceId === direct && s.name === 'hub initEvent'));
    expect(spans.filter((s) => s.traceId === relayed)).toEqual([]);
  });
});
