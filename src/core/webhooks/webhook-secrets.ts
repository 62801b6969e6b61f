import type { WebhookSubscriptionRepository } from '../../data/repositories/webhook-subscription.repository.js';

/** What sealing a webhook secret needs of the key vault (src/auth/key-vault.ts). */
export interface SecretVault {
  seal(context: string, plaintext: string): Promise<string>;
  open(context: string, sealed: string, where: string): Promise<{ plaintext: string; stale: boolean }>;
}

/** One stored signing secret of a subscription. */
export interface StoredSecret {
  id: string;
  value: string;
  createdAt: Date;
  expiresAt?: Date | null;
}

/** A secret as older code stored it: the Standard Webhooks form in clear. */
const CLEAR = /^whsec_/;

/**
 * Webhook signing secrets at rest (decision 1043): sealed by the key vault under the key-encryption key
 * like the signing keys, each bound to its tenant and secret id (the JWE's `ctx`), so a value copied to
 * another tenant's or secret's slot does not open. A value still in clear (written before sealing) or
 * sealed under the previous key-encryption key opens too, and `reseal` says it should be written back.
 */
export class WebhookSecrets {
  constructor(private readonly vault: SecretVault) {}

  private context(tenant: string, secretId: string): string {
    return `webhook-secret/${tenant}/${secretId}`;
  }

  seal(tenant: string, secretId: string, plaintext: string): Promise<string> {
    return this.vault.seal(this.context(tenant, secretId), plaintext);
  }

  async open(tenant: string, s: StoredSecret): Promise<{ plaintext: string; reseal: boolean }> {
    if (CLEAR.test(s.value)) return { plaintext: s.value, reseal: true };
    const { plaintext, stale } = await this.vault.open(
      this.context(tenant, s.id),
      s.value,
      `webhook secret ${s.id} of tenant ${tenant}`,
    );
    return { plaintext, reseal: stale };
  }

  /** The stored form of a secret: sealed under the current key (a clear or stale value is sealed anew). */
  async stored(tenant: string, s: StoredSecret): Promise<StoredSecret> {
    const { plaintext, reseal } = await this.open(tenant, s);
    return reseal ? { ...s, value: await this.seal(tenant, s.id, plaintext) } : s;
  }

  /**
   * Opens the secrets and writes back, sealed under the current key, any found in clear or under the
   * previous key (compare-and-set on the stored value: a rotation meanwhile wins). Returns the plaintexts.
   */
  async openAll(
    tenant: string,
    subs: WebhookSubscriptionRepository,
    subscription: { _id: Parameters<WebhookSubscriptionRepository['resealSecret']>[0]; secrets: StoredSecret[] },
  ): Promise<string[]> {
    const out: string[] = [];
    for (const s of subscription.secrets) {
      const { plaintext, reseal } = await this.open(tenant, s);
      if (reseal) await subs.resealSecret(subscription._id, s.id, s.value, await this.seal(tenant, s.id, plaintext));
      out.push(plaintext);
    }
    return out;
  }

  /**
   * Seals every secret of the tenant still stored in clear or under the previous key, paused
   * subscriptions' included (delivery reseals only what it uses); returns how many it wrote.
   */
  async sealStored(tenant: string, subs: WebhookSubscriptionRepository): Promise<number> {
    let n = 0;
    for (const sub of await subs.list()) {
      for (const s of sub.secrets) {
        const { plaintext, reseal } = await this.open(tenant, s);
        if (!reseal) continue;
        if (await subs.resealSecret(sub._id, s.id, s.value, await this.seal(tenant, s.id, plaintext))) n++;
      }
    }
    return n;
  }
}
