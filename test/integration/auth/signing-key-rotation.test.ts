import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { decodeProtectedHeader } from 'jose';
import { testEnv } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { SigningKeys } from '../../../src/auth/signing-keys.js';
import { SigningKeysStore } from '../../../src/data/stores/signing-keys.store.js';

const run = promisify(execFile);
/** The CLI starts a TypeScript process (a few seconds, much more on a loaded machine). */
const CLI_TEST_MS = 300_000;

/**
 * Rotation of the internal tokens' signing key by an operator (npm run keys -- rotate): tokens signed
 * with the old key stay valid, new tokens are signed with the new key, the old key retires later.
 */
describe('signing-key rotation of internal tokens', () => {
  let shared: Record<string, string>;
  let a: TestNode;

  beforeAll(async () => {
    const env = testEnv({ KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    shared = {
      REDIS_PREFIX: env.REDIS_PREFIX!,
      MONGODB_CATALOG_DB: env.MONGODB_CATALOG_DB!,
      MONGODB_TENANT_DB_PREFIX: env.MONGODB_TENANT_DB_PREFIX!,
      KEY_ENCRYPTION_KEY: env.KEY_ENCRYPTION_KEY!,
    };
    a = await startTestNode(env);
    await createUser(a, 'acme', { username: 'carol', role: 'clinician' });
  });
  afterAll(async () => a?.destroy());

  it(
    'npm run keys -- rotate: old tokens stay valid, new tokens use the new key on every node',
    async () => {
      const before = await tokenFor(a, 'acme', 'carol');
      const oldKid = decodeProtectedHeader(before).kid!;
      const out = await run(process.execPath, ['--import', 'tsx', 'src/cli/keys.cli.ts', 'rotate'], {
        env: { ...process.env, ...testEnv(shared), LOG_LEVEL: 'silent' },
        timeout: 150_000,
      });
      const rotated = JSON.parse(out.stdout) as { signing: string; stillVerifying: string[] };
      expect(rotated.signing).not.toBe(oldKid);
      expect(rotated.stillVerifying).toContain(oldKid);

      // A node that reads the keys now signs with the new one; the first node, whose cache still
      // holds the old one, verifies it (unknown kid: it re-reads Redis) and keeps accepting the old token.
      const b = await startTestNode({ ...shared });
      try {
        const after = await tokenFor(b, 'acme', 'carol');
        expect(decodeProtectedHeader(after).kid).toBe(rotated.signing);
        for (const [node, token] of [
          [a, before],
          [a, after],
          [b, before],
          [b, after],
        ] as const) {
          expect((await node.http.get('/api/contacts/get', { tenant: 'acme', token })).status).toBe(200);
        }
        const jwks = (await b.http.get('/.well-known/jwks.json')).body as { keys: { kid: string }[] };
        expect(jwks.keys.map((k) => k.kid).sort()).toEqual([oldKid, rotated.signing].sort());
        // The rotating node itself signs with the new key at once.
        await a.services.auth.signingKeys.rotate();
        const newest = (await a.services.auth.signingKeys.list())[0]!;
        expect(decodeProtectedHeader(await tokenFor(a, 'acme', 'carol')).kid).toBe(newest.kid);
      } finally {
        await b.stop();
      }
    },
    CLI_TEST_MS,
  );

  it('retires a replaced key once its successor is older than the retention time', async () => {
    const redis = a.infra.redis;
    const hashKey = `${shared.REDIS_PREFIX}retire-test:signing-keys`;
    const keys = new SigningKeys({
      store: new SigningKeysStore({ redis, keys: { signingKeys: hashKey } }),
      vault: a.services.auth.vault,
      rotationSeconds: 86_400,
      retainSeconds: 0,
      cacheMs: 0,
    });
    const first = await keys.current();
    const verifyFirst = await keys.publicKey(first.kid);
    expect(verifyFirst).toBeDefined();
    const { kid } = await keys.rotate();
    expect((await keys.current()).kid).toBe(kid);
    // Retention 0: the replaced key no longer verifies and is gone from Redis.
    expect(await keys.publicKey(first.kid)).toBeUndefined();
    expect(Object.keys(await redis.hgetall(hashKey))).toHaveLength(1);
    await redis.del(hashKey);
  });
});
