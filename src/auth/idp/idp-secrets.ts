import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Redis } from 'ioredis';
import { randomSecret } from '../secrets.js';

export interface IdpSecrets {
  /** Private signing keys of every realm (RS256 for broad client support, ES256 as well). */
  jwks: { keys: JWK[] };
  cookieKeys: string[];
}

/**
 * The embedded provider's signing keys and cookie keys, created once and shared through Redis (SET NX)
 * so every node signs and verifies alike.
 */
export async function loadIdpSecrets(redis: Redis, key: string): Promise<IdpSecrets> {
  const existing = await redis.get(key);
  if (existing) return JSON.parse(existing) as IdpSecrets;
  const rsa = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const ec = await generateKeyPair('ES256', { extractable: true });
  const fresh: IdpSecrets = {
    jwks: { keys: [{ ...(await exportJWK(rsa.privateKey)), alg: 'RS256', use: 'sig', kid: `rs-${randomSecret(6)}` }, { ...(await exportJWK(ec.privateKey)), alg: 'ES256', use: 'sig', kid: `es-${randomSecret(6)}` }] },
    cookieKeys: [randomSecret(32)],
  };
  await redis.set(key, JSON.stringify(fresh), 'NX');
  return JSON.parse((await redis.get(key))!) as IdpSecrets;
}
