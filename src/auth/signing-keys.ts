import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { SigningKeysStore } from '../data/stores/signing-keys.store.js';
import type { KeyVault } from './key-vault.js';
import { randomSecret } from '../kernel/secrets.js';

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
  /** The sealed keys by field: `g<generation>` (daily) or `r<ms>` (rotated by an operator). */
  store: SigningKeysStore;
  /** Seals the private keys at rest (docs/decisions/150). */
  vault: KeyVault;
  /** A new key is made when the newest is older than this. */
  rotationSeconds: number;
  /** A key whose successor exists verifies tokens for this long after the successor appeared, then is removed. */
  retainSeconds: number;
  /** How long a node trusts its in-memory copy before re-reading Redis. */
  cacheMs?: number;
}

/**
 * Signing keys of internal tokens, shared by every node through Redis, private keys sealed by the
 * key vault. The newest key signs. Rotation needs no leader: when the newest key is older than the
 * rotation period, the key of generation `floor(now / rotation)` is created with HSETNX, so concurrent
 * nodes agree on the winner; an operator adds one at any time with `rotate()` (npm run keys -- rotate).
 * A key stays valid for verification `retainSeconds` after its successor appeared (longer than any
 * token it signed lives), then it is removed.
 */
export class SigningKeys {
  private cache?: { at: number; keys: Map<string, LoadedKey>; newest?: LoadedKey };
  private readonly cacheMs: number;

  constructor(private readonly deps: SigningKeysDeps) {
    this.cacheMs = deps.cacheMs ?? 30_000;
  }

  /** The key to sign with now (created when the newest is due for rotation). */
  async current(): Promise<{ kid: string; key: CryptoKey }> {
    let { newest } = await this.load();
    if (!newest || this.due(newest)) {
      await this.create(`g${Math.floor(Date.now() / 1000 / this.deps.rotationSeconds)}`, true);
      newest = (await this.load(true)).newest!;
    }
    return { kid: newest.kid, key: newest.privateKey };
  }

  /** The public key for a `kid`, re-reading Redis once when the kid is unknown (another node rotated). */
  async publicKey(kid: string | undefined): Promise<CryptoKey | undefined> {
    if (!kid) return undefined;
    const hit = (await this.load()).keys.get(kid) ?? (await this.load(true)).keys.get(kid);
    return hit?.publicKey;
  }

  /** The public JWKS (every key still valid for verification) served at /.well-known/jwks.json. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.current();
    const { keys } = await this.load();
    return { keys: [...keys.values()].map((k) => ({ ...k.publicJwk, kid: k.kid, alg: SIGNING_ALG, use: 'sig' })) };
  }

  /**
   * Adds a new key that signs from now on (this node at once, others within their cache time); tokens
   * of the previous keys stay valid until they expire. Returns the new and the retained kids.
   */
  async rotate(): Promise<{ kid: string; retained: string[] }> {
    const kid = await this.create(`r${Date.now()}-${randomSecret(3)}`, false);
    const { keys } = await this.load(true);
    return { kid, retained: [...keys.keys()].filter((k) => k !== kid) };
  }

  /** The keys that verify now, newest (signing) first. */
  async list(): Promise<{ kid: string; createdAt: string; signing: boolean }[]> {
    const { keys, newest } = await this.load(true);
    return [...keys.values()]
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((k) => ({ kid: k.kid, createdAt: new Date(k.createdAt).toISOString(), signing: k === newest }));
  }

  /** Opens every stored key (a wrong key-encryption key fails here, at start) and re-seals stale ones. */
  async check(): Promise<{ keys: number; resealed: number }> {
    const before = this.resealed;
    const { keys } = await this.load(true);
    return { keys: keys.size, resealed: this.resealed - before };
  }

  private resealed = 0;

  private due(k: StoredKey): boolean {
    return k.createdAt <= Date.now() - this.deps.rotationSeconds * 1000;
  }

  private async create(field: string, onlyIfNew: boolean): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = `${field}-${randomSecret(6)}`;
    const stored: StoredKey = {
      kid,
      createdAt: Date.now(),
      privateJwk: await exportJWK(privateKey),
      publicJwk: await exportJWK(publicKey),
    };
    const sealed = await this.deps.vault.seal(this.context(field), JSON.stringify(stored));
    if (onlyIfNew) await this.deps.store.addIfAbsent(field, sealed);
    else await this.deps.store.put(field, sealed);
    return kid;
  }

  private context(field: string): string {
    return `signing-key:${field}`;
  }

  /** Opens one stored value; values sealed under a previous key-encryption key (or stored in plaintext by older versions) are sealed again. */
  private async open(field: string, value: string): Promise<StoredKey> {
    const where = `the signing key ${field} in ${this.deps.store.location}`;
    if (value.startsWith('{')) {
      await this.reseal(field, value, value);
      return JSON.parse(value) as StoredKey;
    }
    const { plaintext, stale } = await this.deps.vault.open(this.context(field), value, where);
    if (stale) await this.reseal(field, value, plaintext);
    return JSON.parse(plaintext) as StoredKey;
  }

  private async reseal(field: string, was: string, plaintext: string): Promise<void> {
    const sealed = await this.deps.vault.seal(this.context(field), plaintext);
    if (await this.deps.store.replace(field, was, sealed)) this.resealed++;
  }

  private async load(force = false): Promise<NonNullable<SigningKeys['cache']>> {
    if (!force && this.cache && Date.now() - this.cache.at < this.cacheMs) return this.cache;
    const raw = await this.deps.store.all();
    const stored = await Promise.all(
      Object.entries(raw).map(async ([field, value]) => ({ field, key: await this.open(field, value) })),
    );
    stored.sort((a, b) => b.key.createdAt - a.key.createdAt);
    const keys = new Map<string, LoadedKey>();
    const retired: string[] = [];
    stored.forEach(({ field, key: s }, i) => {
      const successor = stored[i - 1]?.key;
      if (successor && successor.createdAt < Date.now() - this.deps.retainSeconds * 1000)
        return void retired.push(field);
      keys.set(s.kid, this.cache?.keys.get(s.kid) ?? ({ ...s } as LoadedKey));
    });
    for (const k of keys.values()) {
      k.privateKey ??= (await importJWK(k.privateJwk, SIGNING_ALG)) as CryptoKey;
      k.publicKey ??= (await importJWK(k.publicJwk, SIGNING_ALG)) as CryptoKey;
    }
    if (retired.length) await this.deps.store.remove(retired);
    this.cache = { at: Date.now(), keys, newest: keys.get(stored[0]?.key.kid ?? '') };
    return this.cache;
  }
}
