import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, freePort, tokenFor } from '../../support/auth.js';
import { testEnv } from '../../support/env.js';
import { runChildNodeToExit } from '../../support/child-node.js';
import { kekId } from '../../../src/auth/key-vault.js';

const newKek = () => randomBytes(32).toString('base64');

/** Every raw value the service keeps its signing keys in: the internal keys' hash and the realms' secrets. */
async function rawKeyValues(node: TestNode): Promise<string[]> {
  const hash = await node.infra.redis.hgetall(node.infra.keys.signingKeys);
  const idp = await node.infra.redis.get(node.infra.keys.idpSecrets);
  return [...Object.values(hash), ...(idp ? [idp] : [])];
}

describe('signing keys at rest', () => {
  const kek1 = newKek();
  let node: TestNode;
  let shared: Record<string, string>;
  let token: string;

  beforeAll(async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = testEnv({ ROLES: 'http,idp', PORT: String(port), PUBLIC_URL: base, KEY_ENCRYPTION_KEY: kek1 });
    shared = {
      REDIS_PREFIX: env.REDIS_PREFIX!,
      MONGODB_CATALOG_DB: env.MONGODB_CATALOG_DB!,
      MONGODB_TENANT_DB_PREFIX: env.MONGODB_TENANT_DB_PREFIX!,
    };
    node = await startTestNode(env);
    await createUser(node, 'acme', { username: 'carol', role: 'clinician', password: 'pw-carol' });
    token = await tokenFor(node, 'acme', 'carol');
    // The realm's keys are made on its first use.
    expect((await node.http.get('/realms/acme/jwks', { host: new URL(base).host })).status).toBe(200);
  });
  afterAll(async () => node?.destroy());

  it('keeps no private key material in Redis in plaintext', async () => {
    const values = await rawKeyValues(node);
    expect(values.length).toBeGreaterThanOrEqual(2);
    for (const v of values) {
      expect(v).not.toMatch(/"d"\s*:/);
      expect(v).not.toMatch(/privateJwk|cookieKeys/);
      // A JWE sealed under the configured key-encryption key.
      expect(decodeProtectedHeader(v)).toMatchObject({
        alg: 'A256KW',
        enc: 'A256GCM',
        kid: kekId(Buffer.from(kek1, 'base64')),
      });
    }
  });

  it('refuses to load the keys under a wrong key-encryption key, naming the setting, and leaves them as they were', async () => {
    const before = await rawKeyValues(node);
    const { code, stderr } = await runChildNodeToExit(
      testEnv({ ...shared, ROLES: 'http', KEY_ENCRYPTION_KEY: newKek() }),
    );
    expect(code).toBe(78);
    expect(stderr).toContain('KEY_ENCRYPTION_KEY:');
    expect(stderr).toContain(kekId(Buffer.from(kek1, 'base64')));
    expect(await rawKeyValues(node)).toEqual(before);
    expect((await node.http.get('/api/contacts/get', { tenant: 'acme', token })).status).toBe(200);
  });

  it('opens keys sealed under KEY_ENCRYPTION_KEY_PREVIOUS and seals them again under the new key', async () => {
    // Its own keys and databases: the other tests keep theirs under kek1.
    const env = testEnv({ KEY_ENCRYPTION_KEY: kek1 });
    const own = {
      REDIS_PREFIX: env.REDIS_PREFIX!,
      MONGODB_CATALOG_DB: env.MONGODB_CATALOG_DB!,
      MONGODB_TENANT_DB_PREFIX: env.MONGODB_TENANT_DB_PREFIX!,
    };
    const first = await startTestNode(env);
    await createUser(first, 'acme', { username: 'carol', role: 'clinician' });
    const token = await tokenFor(first, 'acme', 'carol');
    await first.stop();
    const kek2 = newKek();
    const rotated = await startTestNode({
      ...own,
      ROLES: 'http',
      KEY_ENCRYPTION_KEY: kek2,
      KEY_ENCRYPTION_KEY_PREVIOUS: kek1,
    });
    try {
      for (const v of await rawKeyValues(rotated))
        expect(decodeProtectedHeader(v).kid).toBe(kekId(Buffer.from(kek2, 'base64')));
      expect((await rotated.http.get('/api/contacts/get', { tenant: 'acme', token })).status).toBe(200);
    } finally {
      await rotated.stop();
    }
    // The old key is no longer needed: a node with only the new one starts and accepts the same token.
    const only = await startTestNode({ ...own, ROLES: 'http', KEY_ENCRYPTION_KEY: kek2 });
    try {
      expect((await only.http.get('/api/contacts/get', { tenant: 'acme', token })).status).toBe(200);
    } finally {
      await only.destroy();
    }
  });
});
