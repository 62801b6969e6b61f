import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { startTestNode, type TestNode } from '../../support/node.js';
import { tokenFor } from '../../support/auth.js';
import { testEnv } from '../../support/env.js';
import { inHours } from '../../support/events.js';
import { checkUrl, addressAllowed } from '../../../src/core/webhooks/outbound-request.js';
import { productionProblems } from '../../../src/config/production-checks.js';

interface Listener {
  child: ChildProcess;
  url: Promise<string>;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** `npm run webhooks -- listen ...` as a process with the node's settings (the sources, as the suite runs them). */
function listen(env: Record<string, string>, args: string[]): Listener {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/webhooks.cli.ts', 'listen', ...args], {
    env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...env },
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/events)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`listener exited (${code}) before listening:\n${err}`)));
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, url, stdout: () => out, exited };
}

function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The development receiver (decision 1071): one command subscribes a loopback receiver to the local
 * tenant through a node configured like `npm start` (SEED_DEMO, so local receivers allowed by default),
 * verifies signatures, prints the events, replays, and unsubscribes when it ends.
 */
describe('npm run webhooks -- listen', () => {
  let node: TestNode;
  let env: Record<string, string>;
  let alice: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    env = testEnv({ ROLES: 'http,workers', SEED_DEMO: 'true', WEBHOOK_SWEEP_MS: '300', WEBHOOK_BACKOFF_MS: '50' });
    node = await startTestNode(env);
    alice = await tokenFor(node, 'demo', 'alice');
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill();
    await node?.destroy();
  });

  const createEvent = async (name: string) => {
    const r = await node.http.post('/api/events/create', {
      tenant: 'demo',
      token: alice,
      body: { name, startAt: inHours(1), endAt: inHours(2), participants: [] },
    });
    expect(r.status).toBe(201);
    return r.body.id as string;
  };

  it('subscribes, verifies and prints each delivery, refuses a forged one, and unsubscribes at the end', async () => {
    const l = listen(env, ['--types', 'consultation.scheduled', '--exit-after', '2']);
    children.push(l.child);
    const url = await l.url;
    const first = await createEvent('Listen 1');
    // A request that is not signed with the subscription's secret is refused and not printed as an event.
    const forged = JSON.stringify({ type: 'consultation.scheduled', sequence: '1', data: {} });
    const t = String(Math.floor(Date.now() / 1000));
    expect(
      await post(url, forged, { 'webhook-id': 'evt_forged', 'webhook-timestamp': t, 'webhook-signature': 'v1,AAAA' }),
    ).toBe(400);
    const second = await createEvent('Listen 2');
    expect(await l.exited).toBe(0);
    const lines = l.stdout().trim().split('\n');
    expect(lines.filter((x) => x.startsWith('REFUSED'))).toEqual(['REFUSED evt_forged: the signature does not verify']);
    const events = lines.filter((x) => x.startsWith('#'));
    expect(events.map((x) => x.split(' ').slice(1, 3))).toEqual([
      ['consultation.scheduled', first],
      ['consultation.scheduled', second],
    ]);
    expect(events.every((x) => / evt_\w+ verified /.test(x))).toBe(true);
    // Its subscription ended with it.
    const db = node.infra.mongo.tenantDb('demo');
    expect(await db.models.WebhookSubscription.countDocuments({})).toBe(0);

    // Replay: a new listener has the log after a cursor delivered again, under the same event ids.
    const again = listen(env, ['--types', 'consultation.scheduled', '--replay-from', '0', '--exit-after', '2']);
    children.push(again.child);
    expect(await again.exited).toBe(0);
    const replayed = again
      .stdout()
      .trim()
      .split('\n')
      .filter((x) => x.startsWith('#'));
    expect(replayed.map((x) => x.split(' ')[3])).toEqual(events.map((x) => x.split(' ')[3]));
  }, 120_000);

  it('loosens nothing in production: the allowance is loopback http only, and production refuses it', () => {
    const local = { allowHttp: false, allowLocalReceivers: true, allowPrivateNetworks: false };
    expect(checkUrl('http://127.0.0.1:4000/hook', local).port).toBe('4000');
    expect(checkUrl('http://hooks.localhost:4000/hook', local).hostname).toBe('hooks.localhost');
    expect(() => checkUrl('http://example.org/hook', local)).toThrow(/only https URLs/);
    expect(() => checkUrl('http://10.0.0.5/hook', local)).toThrow(/only https URLs/);
    expect(addressAllowed('127.0.0.1', local)).toBe(true);
    expect(addressAllowed('::1', local)).toBe(true);
    for (const a of ['10.0.0.5', '169.254.169.254', '192.168.1.1', 'fe80::1'])
      expect({ a, allowed: addressAllowed(a, local) }).toEqual({ a, allowed: false });
    const strict = { allowHttp: false, allowLocalReceivers: false, allowPrivateNetworks: false };
    expect(() => checkUrl('http://127.0.0.1:4000/hook', strict)).toThrow(/only https URLs/);
    expect(addressAllowed('127.0.0.1', strict)).toBe(false);
    const base = {
      PROVISIONING_CODE: 'x'.repeat(32),
      OIDC_CLIENT_SECRET: 'y'.repeat(32),
      OIDC_MODE: 'external',
      ALLOW_EMBEDDED_IDP: false,
      VCS_ADAPTER: 'livekit',
      VCS_EMBEDDED_SECRET: 'z'.repeat(32),
      SEED_DEMO: false,
      REDIS_URL: 'redis://u:p@redis:6379',
      ALLOW_REDIS_WITHOUT_PASSWORD: false,
      METRICS_HOST: '127.0.0.1',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: false,
      WEBHOOK_ALLOW_HTTP: false,
      TRUST_PROXY: 'loopback',
      KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    } as const;
    expect(productionProblems({ ...base, WEBHOOK_ALLOW_LOCAL_RECEIVERS: true }).join('\n')).toMatch(
      /^WEBHOOK_ALLOW_LOCAL_RECEIVERS: /m,
    );
    expect(productionProblems({ ...base })).toEqual([]);
  });
});
