import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { request } from '../../support/http.js';
import { addressAllowed, postJson, type OutboundPolicy } from '../../../src/core/webhooks/outbound-request.js';

const closed: OutboundPolicy = {
  allowPrivateNetworks: false,
  allowHttp: true,
  timeoutMs: 2000,
  maxResponseBytes: 1024,
};
const open: OutboundPolicy = { ...closed, allowPrivateNetworks: true };

describe('outbound requests go only where the policy allows (SSRF)', () => {
  let node: TestNode;
  let admin: string;
  let server: http.Server;
  let port: number;
  let hits = 0;
  let answer: (res: http.ServerResponse) => void = (res) => res.writeHead(204).end();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      req.resume();
      answer(res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    // The operator allows http (so the refusals below are about addresses) but not private networks.
    node = await startTestNode({ ROLES: 'http', WEBHOOK_ALLOW_HTTP: 'true' });
    await createUser(node, 'acme', { username: 'admin', role: 'admin' });
    admin = await tokenFor(node, 'acme', 'admin');
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await node?.destroy();
  });

  it.each([
    ['loopback', 'http://127.0.0.1:PORT/hook'],
    ['loopback by name', 'http://localhost:PORT/hook'],
    ['IPv6 loopback', 'http://[::1]:PORT/hook'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]:PORT/hook'],
    ['cloud metadata (link-local)', 'http://169.254.169.254/latest/meta-data'],
    ['private range', 'http://10.1.2.3/hook'],
    ['this network', 'http://0.0.0.0:PORT/hook'],
    ['a scheme other than http(s)', 'file:///etc/passwd'],
    ['credentials in the URL', 'https://user:pw@example.invalid/'],
  ])('refuses a subscription to %s', async (_what, raw) => {
    const url = raw.replace('PORT', String(port));
    const res = await request(node.url!, 'POST', '/api/webhooks/subscriptions', {
      tenant: 'acme',
      token: admin,
      body: { url, types: ['media.uploaded'] },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('url_not_allowed');
    expect(hits).toBe(0);
  });

  it('classifies the special-purpose ranges and lets public addresses through', () => {
    for (const a of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '::1',
      'fe80::1',
      'fc00::1',
      '::ffff:10.0.0.1',
      '224.0.0.1',
    ])
      expect([a, addressAllowed(a, closed)]).toEqual([a, false]);
    for (const a of ['93.184.216.34', '2606:4700::1111', '8.8.8.8'])
      expect([a, addressAllowed(a, closed)]).toEqual([a, true]);
    expect(addressAllowed('127.0.0.1', open)).toBe(true);
  });

  it('checks the address it connects to, not the name: a name resolving to loopback is refused at delivery', async () => {
    // The name passes any check on its text; the connection's own lookup refuses the loopback answer.
    const r = await postJson(`http://localhost:${port}/hook`, {}, '{}', closed);
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/not allowed/);
    const literal = await postJson(`http://127.0.0.1:${port}/hook`, {}, '{}', closed);
    expect(literal).toMatchObject({ ok: false });
    expect(hits).toBe(0);
    // The same request with the operator's allowance goes through.
    expect(await postJson(`http://localhost:${port}/hook`, {}, '{}', open)).toMatchObject({ ok: true, status: 204 });
    expect(hits).toBe(1);
  });

  it('cuts a response off at the size cap and gives up on a slow endpoint at the timeout', async () => {
    answer = (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(100_000));
    const big = await postJson(`http://127.0.0.1:${port}/hook`, {}, '{}', open);
    expect(big).toMatchObject({ ok: true, status: 200, error: 'response larger than 1024 bytes' });
    answer = () => undefined; // never answers
    const slow = await postJson(`http://127.0.0.1:${port}/hook`, {}, '{}', { ...open, timeoutMs: 300 });
    expect(slow).toMatchObject({ ok: false, error: 'timed out after 300 ms' });
    answer = (res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    expect(await postJson(`http://127.0.0.1:${port}/hook`, {}, '{}', open)).toMatchObject({ ok: false, status: 302 });
  });
});
