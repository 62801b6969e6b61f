import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { IdpSecretsStore } from '../data/stores/idp-secrets.store.js';
import type { KeyVault } from './key-vault.js';
import { randomSecret } from '../kernel/secrets.js';

/** What a realm provider is built with: its signing keys (as the provider reads them) and cookie keys. */
export interface IdpSecrets {
  /**
   * Private signing keys of every realm (RS256 for broad client support, ES256 as well). Per algorithm
   * one key signs; the others carry `key_ops: ['verify']`: published in the JWKS and accepted, never
   * used to sign (a key announced before it signs, or a replaced one until its tokens expired).
   */
  jwks: { keys: JWK[] };
  cookieKeys: string[];
}

/** When a realm key signs: from `activeFrom`; `replacedAt` is when its successor started to sign. */
export interface RealmKeyTimes {
  activeFrom: number;
  replacedAt?: number;
}

/** The stored value (sealed): every key that still verifies, with its times. */
export interface StoredIdpSecrets {
  jwks: { keys: JWK[] };
  cookieKeys: string[];
  /** Per kid; a key without an entry (made before rotation existed) has signed since the start. */
  times?: Record<string, RealmKeyTimes>;
}

/** The secrets as a provider sees them at `now`, and when that view changes next (a key activates). */
export interface IdpSecretsView {
  secrets: IdpSecrets;
  /** The kids that sign, then every kid that verifies: equal strings mean equal providers. */
  fingerprint: string;
  nextChangeAt?: number;
}

export interface RealmKeyInfo {
  kid: string;
  alg: string;
  activeFrom: number;
  replacedAt?: number;
  signing: boolean;
}

const CONTEXT = 'idp-secrets';
const ALGORITHMS = ['RS256', 'ES256'] as const;

/**
 * The embedded provider's signing keys and cookie keys, created once and shared through Redis (SET NX)
 * so every node signs and verifies alike; sealed by the key vault at rest. A value that does not open
 * with the configured key-encryption keys is an error, never replaced by new keys (that would end
 * every realm session and refuse every realm token).
 *
 * Rotation (`rotate`) adds a key per algorithm that is published at once and signs only from
 * `activeFrom` (a minute later by default), so every node and every relying party's JWKS cache has
 * seen it before the first token it signs; the keys it replaces keep verifying for `retainSeconds`
 * after that and are dropped by a later rotation. A compare-and-set keeps concurrent rotations apart.
 */
export class IdpSecretsService {
  constructor(
    private readonly store: IdpSecretsStore,
    private readonly vault: KeyVault,
  ) {}

  /** The secrets as a provider built now uses them, created on first use. */
  async load(now = Date.now()): Promise<IdpSecrets> {
    return signingView((await this.loadStored()).stored, now).secrets;
  }

  /** The stored secrets (created on first use) and the raw sealed value they came from. */
  async loadStored(): Promise<{ stored: StoredIdpSecrets; raw: string }> {
    const existing = await this.openRaw();
    if (existing) return existing;
    const fresh: StoredIdpSecrets = {
      jwks: { keys: await Promise.all(ALGORITHMS.map(newKey)) },
      cookieKeys: [randomSecret(32)],
    };
    await this.store.createIfAbsent(await this.vault.seal(CONTEXT, JSON.stringify(fresh)));
    return (await this.openRaw())!;
  }

  /** The sealed value as stored (a cheap change check: a rotation writes a new one). */
  raw(): Promise<string | null> {
    return this.store.get();
  }

  /** Opens the stored secrets if any (a wrong key-encryption key fails here) and re-seals stale ones. */
  async open(): Promise<StoredIdpSecrets | undefined> {
    return (await this.openRaw())?.stored;
  }

  /**
   * Adds a new signing key per algorithm, published now and signing from `activateInSeconds` on; the
   * keys signing until then are marked replaced at that moment; keys replaced more than
   * `retainSeconds` ago are dropped (their tokens have expired).
   */
  async rotate(
    o: { activateInSeconds?: number; retainSeconds?: number; now?: number } = {},
  ): Promise<{ added: RealmKeyInfo[]; dropped: string[] }> {
    const activateInSeconds = o.activateInSeconds ?? 60;
    const retainSeconds = o.retainSeconds ?? 24 * 60 * 60;
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = o.now ?? Date.now();
      const { stored, raw } = await this.loadStored();
      const activeFrom = now + activateInSeconds * 1000;
      const times: Record<string, RealmKeyTimes> = { ...stored.times };
      const dropped: string[] = [];
      const kept: JWK[] = [];
      for (const k of stored.jwks.keys) {
        const t = times[k.kid!] ?? { activeFrom: 0 };
        if (t.replacedAt !== undefined && t.replacedAt + retainSeconds * 1000 <= now) {
          dropped.push(k.kid!);
          delete times[k.kid!];
          continue;
        }
        // Every key not yet replaced (the signing one, and one still waiting to sign) is replaced by the new one.
        times[k.kid!] = t.replacedAt === undefined ? { ...t, replacedAt: activeFrom } : t;
        kept.push(k);
      }
      const added = await Promise.all(ALGORITHMS.map(newKey));
      for (const k of added) times[k.kid!] = { activeFrom };
      const next: StoredIdpSecrets = { jwks: { keys: [...added, ...kept] }, cookieKeys: stored.cookieKeys, times };
      if (await this.store.swap(raw, await this.vault.seal(CONTEXT, JSON.stringify(next)))) {
        return {
          added: added.map((k) => ({ kid: k.kid!, alg: k.alg!, activeFrom, signing: activeFrom <= now })),
          dropped,
        };
      }
    }
    throw new Error("the embedded realms' keys changed under five rotation attempts in a row; try again");
  }

  /** Every key that verifies, newest first, and whether it signs at `now`. */
  async list(now = Date.now()): Promise<RealmKeyInfo[]> {
    const { stored } = await this.loadStored();
    const view = signingView(stored, now).secrets.jwks.keys;
    return view
      .map((k) => ({ kid: k.kid!, alg: k.alg!, ...(stored.times?.[k.kid!] ?? { activeFrom: 0 }), signing: !k.key_ops }))
      .sort((a, b) => b.activeFrom - a.activeFrom || a.alg.localeCompare(b.alg));
  }

  private async openRaw(): Promise<{ stored: StoredIdpSecrets; raw: string } | undefined> {
    const value = await this.store.get();
    if (!value) return undefined;
    if (value.startsWith('{')) {
      // Written in plaintext by a version before the key vault: sealed now.
      const sealed = await this.vault.seal(CONTEXT, value);
      const swapped = await this.store.reseal(value, sealed);
      return { stored: JSON.parse(value) as StoredIdpSecrets, raw: swapped ? sealed : value };
    }
    const { plaintext, stale } = await this.vault.open(
      CONTEXT,
      value,
      `the embedded realms' signing keys in ${this.store.location}`,
    );
    if (stale) {
      const sealed = await this.vault.seal(CONTEXT, plaintext);
      const swapped = await this.store.reseal(value, sealed);
      return { stored: JSON.parse(plaintext) as StoredIdpSecrets, raw: swapped ? sealed : value };
    }
    return { stored: JSON.parse(plaintext) as StoredIdpSecrets, raw: value };
  }
}

/**
 * The provider's view at `now`: per algorithm the key that activated last signs; every other key is
 * verify-only. `nextChangeAt` is when a published key starts to sign (the provider must be rebuilt then).
 */
export function signingView(stored: StoredIdpSecrets, now: number): IdpSecretsView {
  const times = (k: JWK): RealmKeyTimes => stored.times?.[k.kid!] ?? { activeFrom: 0 };
  const signing = new Map<string, JWK>();
  let nextChangeAt: number | undefined;
  for (const k of stored.jwks.keys) {
    const { activeFrom } = times(k);
    if (activeFrom > now) {
      nextChangeAt = Math.min(nextChangeAt ?? activeFrom, activeFrom);
      continue;
    }
    const best = signing.get(k.alg!);
    if (!best || times(best).activeFrom < activeFrom) signing.set(k.alg!, k);
  }
  const signers = new Set(signing.values());
  const keys = stored.jwks.keys.map((k) => {
    const { key_ops: _ops, ...rest } = k;
    return signers.has(k) ? rest : { ...rest, key_ops: ['verify'] };
  });
  const fingerprint = `${[...signers]
    .map((k) => k.kid)
    .sort()
    .join(',')}|${keys
    .map((k) => k.kid)
    .sort()
    .join(',')}`;
  return {
    secrets: { jwks: { keys }, cookieKeys: stored.cookieKeys },
    fingerprint,
    ...(nextChangeAt === undefined ? {} : { nextChangeAt }),
  };
}

async function newKey(alg: (typeof ALGORITHMS)[number]): Promise<JWK> {
  const pair = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
  return {
    ...(await exportJWK(pair.privateKey)),
    alg,
    use: 'sig',
    kid: `${alg === 'RS256' ? 'rs' : 'es'}-${randomSecret(6)}`,
  };
}
