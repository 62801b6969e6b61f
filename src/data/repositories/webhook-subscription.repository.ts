import { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { WebhookSubscriptionRecord } from '../models/webhook.model.js';

export type { WebhookSubscriptionRecord } from '../models/webhook.model.js';

export interface NewSubscription {
  url: string;
  description?: string;
  types: string[];
  secret: { id: string; value: string; createdAt: Date };
  cursor: number;
}

/**
 * Webhook subscriptions of one tenant. Every change of delivery state is a guarded update on the
 * holder's lease token, so a run that lost its lease (it stalled past it) cannot move the cursor.
 */
export class WebhookSubscriptionRepository {
  constructor(private readonly db: TenantDb) {}

  private get Sub() {
    return this.db.models.WebhookSubscription;
  }

  async create(s: NewSubscription): Promise<WebhookSubscriptionRecord> {
    const doc = await this.Sub.create({
      url: s.url,
      description: s.description,
      types: s.types,
      secrets: [s.secret],
      cursor: s.cursor,
    });
    return doc.toObject() as WebhookSubscriptionRecord;
  }

  findById(id: Types.ObjectId): Promise<WebhookSubscriptionRecord | null> {
    return this.Sub.findById(id).lean<WebhookSubscriptionRecord>().exec();
  }

  list(): Promise<WebhookSubscriptionRecord[]> {
    return this.Sub.find({}).sort({ _id: 1 }).limit(1000).lean<WebhookSubscriptionRecord[]>().exec();
  }

  /** Active subscriptions: the ones the sweeper and a publish wake up. */
  active(): Promise<WebhookSubscriptionRecord[]> {
    return this.Sub.find({ status: 'active' }).lean<WebhookSubscriptionRecord[]>().exec();
  }

  set(id: Types.ObjectId, set: Record<string, unknown>, unset: string[] = []) {
    const update: Record<string, unknown> = { $set: set };
    if (unset.length) update.$unset = Object.fromEntries(unset.map((k) => [k, 1]));
    return this.Sub.findOneAndUpdate({ _id: id }, update, { returnDocument: 'after' })
      .lean<WebhookSubscriptionRecord>()
      .exec();
  }

  /** Replaces the secrets (rotation): the new one first, the previous one with its expiry. */
  setSecrets(id: Types.ObjectId, secrets: { id: string; value: string; createdAt: Date; expiresAt?: Date | null }[]) {
    return this.set(id, { secrets });
  }

  /**
   * Writes a secret's value sealed anew (it was in clear, or under the previous key-encryption key),
   * only if the stored value is still the one read: a rotation in between keeps its own.
   */
  async resealSecret(id: Types.ObjectId, secretId: string, was: string, sealed: string): Promise<boolean> {
    // The array is written whole (no positional update: not every supported server applies one
    // behind an $elemMatch), guarded by the value read, which any rotation replaces.
    const guard = { _id: id, 'secrets.value': was };
    const doc = await this.Sub.findOne(guard, { secrets: 1 }).lean<Pick<WebhookSubscriptionRecord, 'secrets'>>().exec();
    if (!doc) return false;
    const secrets = doc.secrets.map((s) => (s.id === secretId && s.value === was ? { ...s, value: sealed } : s));
    const r = await this.Sub.updateOne(guard, { $set: { secrets } }).exec();
    return r.modifiedCount === 1;
  }

  async remove(id: Types.ObjectId): Promise<boolean> {
    const r = await this.Sub.deleteOne({ _id: id }).exec();
    await this.db.models.WebhookAttempt.deleteMany({ subscriptionId: id }).exec();
    return r.deletedCount === 1;
  }

  /**
   * Takes the delivery lease when the subscription is active and nobody holds a live lease; counts the
   * run. Null when another run holds it or the subscription is paused or gone.
   */
  acquire(id: Types.ObjectId, token: string, until: Date, now: Date): Promise<WebhookSubscriptionRecord | null> {
    return this.Sub.findOneAndUpdate(
      {
        _id: id,
        status: 'active',
        $or: [{ 'lease.until': { $exists: false } }, { 'lease.until': null }, { 'lease.until': { $lt: now } }],
      },
      { $set: { lease: { token, until } }, $inc: { runs: 1 } },
      { returnDocument: 'after' },
    )
      .lean<WebhookSubscriptionRecord>()
      .exec();
  }

  /**
   * A change made only while `token` still holds the lease and the subscription is active; false when
   * the lease was lost (taken over, or dropped by a replay) or an administrator paused it meanwhile.
   */
  async whileHolding(id: Types.ObjectId, token: string, update: Record<string, unknown>): Promise<boolean> {
    const r = await this.Sub.updateOne({ _id: id, 'lease.token': token, status: 'active' }, update).exec();
    return r.matchedCount === 1;
  }

  async release(id: Types.ObjectId, token: string): Promise<void> {
    await this.Sub.updateOne({ _id: id, 'lease.token': token }, { $unset: { lease: 1 } }).exec();
  }
}

export { Types };
