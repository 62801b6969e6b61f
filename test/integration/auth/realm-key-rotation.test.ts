import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { decodeProtectedHeader, generateKeyPair, exportJWK } from 'jose';
import { testEnv } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, freePort } from '../../support/auth.js';
import { Browser, authorizeIn } from '../../support/realm.js';
import { request } from '../../support/http.js';
import { resourceIndicator } from '../../../src/auth/oidc-realms.js';
import { signingView, type StoredIdpSecrets } from '../../../src/auth/idp-secrets.js';

const run = promisify(execFile);
/** The CLI starts a TypeScript process (a few seconds, much more on a loaded machine). */
const CLI_TEST_MS = 300_000;

interface PublishedKey {
  kid: string;
  alg: string;
  key_ops?: string[];
}

/**
 * Rotation of the embedded realms' signing keys (npm run keys -- rotate-realm), seen from outside: a real
 * code + PKCE sign-in mints the realm tokens, the API verifies them through the realm's published JWKS,
 * on the node that rotated and on another node serving the same realms. Old tokens stay valid, new
 * tokens carry the new `kid`, a key announced for later is published before it signs.
 */
describe("rotation of the embedded realms' signing keys", () => {
  let shared: Record<string, string>;
  let a: TestNode;
  let b: TestNode;
  let base: string;
  let baseB: string;
  let redirectUri: string;

  beforeAll(async () => {
    const [port, portB] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    baseB = `http://127.0.0.1:${portB}`;
    redirectUri = `${base}/auth/callback`;
    // A cool-down of 0: the API refetches the realm's JWKS at the first unknown kid, however recent its last fetch.
    const env = testEnv({ ROLES: 'http,idp', PUBLIC_URL: base, OIDC_JWKS_COOLDOWN_SECONDS: '0' });
    shared = {
      REDIS_PREFIX: env.REDIS_PREFIX!,
      MONGODB_CATALOG_DB: env.MONGODB_CATALOG_DB!,
      MONGODB_TENANT_DB_PREFIX: env.MONGODB_TENANT_DB_PREFIX!,
    };
    a = await startTestNode({ ...env, PORT: String(port) });
    // The second node serves the same realms (same issuer, same Redis) on its own port.
    b = await startTestNode({ ...env, PORT: String(portB) });
    await createUser(a, 'acme', { username: 'uma', role: 'clinician', password: 'uma-password' });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.destroy();
  });

  async function realmToken(): Promise<string> {
    const a1 = await authorizeIn(a, new Browser(base), 'acme', redirectUri, {
      username: 'uma',
      password: 'uma-password',
    });
    const config = await a.services.auth.realms.configuration('acme');
    const tokens = await oidc.authorizationCodeGrant(
      config,
      new URL(a1.callbackUrl!),
      { pkceCodeVerifier: a1.codeVerifier, expectedState: a1.state },
      { resource: resourceIndicator(a.config.auth.oidc.audience) },
    );
    return tokens.access_token;
  }

  /** The realm's JWKS as `nodeBase` serves it. */
  async function published(nodeBase: string): Promise<PublishedKey[]> {
    const jwksUri = new URL((await a.services.auth.realms.configuration('acme')).serverMetadata().jwks_uri!);
    const r = await request(nodeBase, 'GET', jwksUri.pathname);
    expect(r.status).toBe(200);
    return (r.body as { keys: PublishedKey[] }).keys;
  }

  /** Waits until both nodes publish `kid` as `state` (each re-reads the stored keys within 5 s). */
  async function publishedEverywhere(kid: string, state: 'signing' | 'verify-only'): Promise<void> {
    for (const nodeBase of [base, baseB]) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const key = (await published(nodeBase)).find((k) => k.kid === kid);
        if (key && (state === 'signing' ? key.key_ops === undefined : key.key_ops?.join() === 'verify')) break;
        if (Date.now() > deadline)
          throw new Error(
            `${nodeBase} does not publish ${kid} as ${state}: ${JSON.stringify(await published(nodeBase))}`,
          );
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  async function acceptedEverywhere(token: string): Promise<void> {
    for (const node of [a, b]) {
      const r = await node.http.get('/api/tenant/ping', { tenant: 'acme', token });
      expect({ node: node.url, status: r.status, body: r.body }).toMatchObject({ status: 200 });
    }
  }

  it(
    'npm run keys -- rotate-realm: new tokens carry the new key on every node, old ones stay valid',
    async () => {
      const before = await realmToken();
      const oldKid = decodeProtectedHeader(before).kid!;
      await acceptedEverywhere(before);

      const out = await run(
        process.execPath,
        ['--import', 'tsx', 'src/cli/keys.cli.ts', 'rotate-realm', '--activate-in', '0'],
        {
          env: { ...process.env, ...testEnv(shared), LOG_LEVEL: 'silent' },
          timeout: 150_000,
        },
      );
      const rotated = JSON.parse(out.stdout) as { added: { kid: string; alg: string; signing: boolean }[] };
      const newKid = rotated.added.find((k) => k.alg === 'RS256')!.kid;
      expect(rotated.added.map((k) => k.alg).sort()).toEqual(['ES256', 'RS256']);
      expect(newKid).not.toBe(oldKid);

      await publishedEverywhere(newKid, 'signing');
      // The replaced key is still published, for verification only.
      await publishedEverywhere(oldKid, 'verify-only');
      const after = await realmToken();
      expect(decodeProtectedHeader(after).kid).toBe(newKid);
      await acceptedEverywhere(after);
      await acceptedEverywhere(before);
    },
    CLI_TEST_MS,
  );

  it(
    'publishes a key announced for later before it signs, and drops keys past their retention',
    async () => {
      const keys = a.services.auth.idpSecrets;
      const first = await keys.rotate({ activateInSeconds: 0 });
      const signingKid = first.added.find((k) => k.alg === 'RS256')!.kid;
      await publishedEverywhere(signingKid, 'signing');
      const replaced = (await keys.list())
        .filter((k) => k.replacedAt !== undefined && k.replacedAt <= Date.now())
        .map((k) => k.kid);
      expect(replaced.length).toBeGreaterThanOrEqual(2);

      const { added } = await keys.rotate({ activateInSeconds: 3600 });
      const pending = added.find((k) => k.alg === 'RS256')!.kid;
      await publishedEverywhere(pending, 'verify-only');
      // Until it activates, the current key goes on signing; its tokens are accepted everywhere.
      const meanwhile = await realmToken();
      expect(decodeProtectedHeader(meanwhile).kid).toBe(signingKid);
      await acceptedEverywhere(meanwhile);

      // With no retention, the keys replaced already are dropped; the one still signing (replaced only
      // when the announced one activates) and the announced one stay.
      const { dropped } = await keys.rotate({ activateInSeconds: 3600, retainSeconds: 0 });
      expect(dropped.sort()).toEqual(replaced.sort());
      for (const nodeBase of [base, baseB]) {
        const deadline = Date.now() + 60_000;
        while ((await published(nodeBase)).some((k) => dropped.includes(k.kid))) {
          if (Date.now() > deadline) throw new Error(`${nodeBase} still publishes a dropped key`);
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      const still = (await published(base)).map((k) => k.kid);
      expect(still).toEqual(expect.arrayContaining([signingKid, pending]));
      expect(decodeProtectedHeader(await realmToken()).kid).toBe(signingKid);
    },
    CLI_TEST_MS,
  );
});

describe('which realm key signs when (signingView)', () => {
  async function key(alg: 'RS256' | 'ES256', kid: string) {
    const pair = await generateKeyPair(alg, { extractable: true });
    return { ...(await exportJWK(pair.privateKey)), alg, use: 'sig', kid };
  }

  it('keeps the old key signing until the new one activates, then swaps and tells when', async () => {
    const stored: StoredIdpSecrets = {
      jwks: {
        keys: [
          await key('RS256', 'rs-new'),
          await key('ES256', 'es-new'),
          await key('RS256', 'rs-old'),
          await key('ES256', 'es-old'),
        ],
      },
      cookieKeys: ['c'],
      times: {
        'rs-new': { activeFrom: 1000 },
        'es-new': { activeFrom: 1000 },
        'rs-old': { activeFrom: 0, replacedAt: 1000 },
      },
    };
    const signers = (now: number) =>
      signingView(stored, now)
        .secrets.jwks.keys.filter((k) => !k.key_ops)
        .map((k) => k.kid)
        .sort();
    expect(signers(999)).toEqual(['es-old', 'rs-old']);
    expect(signingView(stored, 999).nextChangeAt).toBe(1000);
    expect(signers(1000)).toEqual(['es-new', 'rs-new']);
    expect(signingView(stored, 1000).nextChangeAt).toBeUndefined();
    // Every key is in the view either way: a verify-only key is still published and accepted.
    expect(
      signingView(stored, 999)
        .secrets.jwks.keys.map((k) => k.kid)
        .sort(),
    ).toEqual(['es-new', 'es-old', 'rs-new', 'rs-old']);
    expect(signingView(stored, 999).fingerprint).not.toBe(signingView(stored, 1000).fingerprint);
  });
});
