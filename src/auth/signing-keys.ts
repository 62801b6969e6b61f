import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { Redis } from 'ioredis';
import { randomSecret } from './secrets.js';

export const SIGNING_ALG = 'ES256';

interface StoredKey {
  kid: string;
  createdAt: number;
  privateJwk: JWK;
  publicJwk: JWK;
}

interface LoadedKey extends StoredKey {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

export interface SigningKeysDeps {
  redis: Redis;
  /** Redis hash holding one key per rotation generation (keys.signingKeys). */
  hashKey: string;
  /** A new key is used every `rotationSeconds`; the previous generation stays valid for verification. */
  rotationSeconds: number;
  /** How long a node trusts its in-memory copy before re-reading Redis. */
  cacheMs?: number;
}

/**
 * Signing keys of internal tokens, shared by every node through Redis. Rotation needs no leader: the
 * key of generation `floor(now / rotation)` is created with HSETNX, so concurrent nodes agree on the
 * winner, and verification accepts the current and the previous generations (looked up by `kid`).
 */
export class SigningKeys {
  private cache?: { at: number; keys: Map<string, LoadedKey>; byGen: Map<number, string> };
  private readonly cacheMs: number;

  constructor(private readonly deps: SigningKeysDeps) {
    this.cacheMs = deps.cacheMs ?? 30_000;
  }

  private generation(now = Date.now()): number {
    return Math.floor(now / 1000 / this.deps.rotationSeconds);
  }

  /** The key to sign with now (created on first use in its generation). */
  async current(): Promise<{ kid: string; key: CryptoKey }> {
    const gen = this.generation();
    let kid = (await this.load()).byGen.get(gen);
    if (!kid) {
      await this.create(gen);
      kid = (await this.load(true)).byGen.get(gen);
    }
    const k = this.cache!.keys.get(kid!)!;
    return { kid: k.kid, key: k.privateKey };
  }

  /** The public key for a `kid`, re-reading Redis once when the kid is unknown (another node rotated). */
  async publicKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    if (!kid) return undefined;
    const hit = (await this.load()).keys.get(kid) ?? (await this.load(true)).keys.get(kid);
    return hit?.publicKey;
  }

  /** The public JWKS (current and previous generation) served at /.well-known/jwks.json. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.current();
    const { keys } = await this.load();
    return { keys: [...keys.values()].map((k) => ({ ...k.publicJwk, kid: k.kid, alg: SIGNING_ALG, use: 'sig' })) };
  }

  private async create(gen: number): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const stored: StoredKey = { kid: `g${gen}-${randomSecret(6)}`, createdAt: Date.now(), privateJwk: await exportJWK(privateKey), publicJwk: await exportJWK(publicKey) };
    await this.deps.redis.hsetnx(this.deps.hashKey, String(gen), JSON.stringify(stored));
    const old = (await this.deps.redis.hkeys(this.deps.hashKey)).filter((g) => Number(g) < gen - 1);
    if (old.length) await this.deps.redis.hdel(this.deps.hashKey, ...old);
  }

  private async load(force = false): Promise<NonNullable<SigningKeys['cache']>> {
    if (!force && this.cache && Date.now() - this.cache.at < this.cacheMs) return this.cache;
    const raw = await this.deps.redis.hgetall(this.deps.hashKey);
    const keys = new Map<string, LoadedKey>();
    const byGen = new Map<number, string>();
    const minGen = this.generation() - 1;
    for (const [gen, json] of Object.entries(raw)) {
      if (Number(gen) < minGen) continue;
      const s = JSON.parse(json) as StoredKey;
      const reuse = this.cache?.keys.get(s.kid);
      keys.set(s.kid, reuse ?? { ...s, privateKey: (await importJWK(s.privateJwk, SIGNING_ALG)) as CryptoKey, publicKey: (await importJWK(s.publicJwk, SIGNING_ALG)) as CryptoKey });
      byGen.set(Number(gen), s.kid);
    }
    this.cache = { at: Date.now(), keys, byGen };
    return this.cache;
  }
}
