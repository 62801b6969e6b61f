import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Redis } from 'ioredis';
import type { KeyVault } from '../key-vault.js';
import { randomSecret } from '../secrets.js';

export interface IdpSecrets {
  /** Private signing keys of every realm (RS256 for broad client support, ES256 as well). */
  jwks: { keys: JWK[] };
  cookieKeys: string[];
}

const CONTEXT = 'idp-secrets';
const RESEAL = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('SET', KEYS[1], ARGV[2]) end return -1`;

/**
 * The embedded provider's signing keys and cookie keys, created once and shared through Redis (SET NX)
 * so every node signs and verifies alike; sealed by the key vault at rest. A value that does not open
 * with the configured key-encryption keys is an error, never replaced by new keys (that would end
 * every realm session and refuse every realm token).
 */
export class IdpSecretsStore {
  constructor(private readonly redis: Redis, private readonly key: string, private readonly vault: KeyVault) {}

  /** The secrets, created on first use. */
  async load(): Promise<IdpSecrets> {
    const existing = await this.open();
    if (existing) return existing;
    const rsa = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
    const ec = await generateKeyPair('ES256', { extractable: true });
    const fresh: IdpSecrets = {
      jwks: { keys: [{ ...(await exportJWK(rsa.privateKey)), alg: 'RS256', use: 'sig', kid: `rs-${randomSecret(6)}` }, { ...(await exportJWK(ec.privateKey)), alg: 'ES256', use: 'sig', kid: `es-${randomSecret(6)}` }] },
      cookieKeys: [randomSecret(32)],
    };
    await this.redis.set(this.key, await this.vault.seal(CONTEXT, JSON.stringify(fresh)), 'NX');
    return (await this.open())!;
  }

  /** Opens the stored secrets if any (a wrong key-encryption key fails here) and re-seals stale ones. */
  async open(): Promise<IdpSecrets | undefined> {
    const value = await this.redis.get(this.key);
    if (!value) return undefined;
    if (value.startsWith('{')) {
      // Written in plaintext by a version before the key vault: sealed now.
      await this.redis.eval(RESEAL, 1, this.key, value, await this.vault.seal(CONTEXT, value));
      return JSON.parse(value) as IdpSecrets;
    }
    const { plaintext, stale } = await this.vault.open(CONTEXT, value, `the embedded realms' signing keys in Redis ${this.key}`);
    if (stale) await this.redis.eval(RESEAL, 1, this.key, value, await this.vault.seal(CONTEXT, plaintext));
    return JSON.parse(plaintext) as IdpSecrets;
  }
}
