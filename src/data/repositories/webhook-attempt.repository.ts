import type { Types } from 'mongoose';
import type { TenantDb } from '../mongo.js';
import type { WebhookAttemptRecord } from '../models/webhook.model.js';

export type { WebhookAttemptRecord } from '../models/webhook.model.js';

export interface NewAttempt {
  subscriptionId: Types.ObjectId;
  eventId: string;
  seq: number;
  at: Date;
  ok: boolean;
  status?: number;
  latencyMs: number;
  error?: string;
}

/** Every delivery attempt (status, latency, error), newest first per subscription. */
export class WebhookAttemptRepository {
  constructor(private readonly db: TenantDb) {}

  async record(a: NewAttempt): Promise<void> {
    await this.db.models.WebhookAttempt.create(a);
  }

  list(subscriptionId: Types.ObjectId, take: number, before?: Date): Promise<WebhookAttemptRecord[]> {
    return this.db.models.WebhookAttempt.find({ subscriptionId, ...(before ? { at: { $lt: before } } : {}) })
      .sort({ at: -1, _id: -1 })
      .limit(take)
      .lean<WebhookAttemptRecord[]>()
      .exec();
  }

  async prune(olderThan: Date): Promise<number> {
    return (await this.db.models.WebhookAttempt.deleteMany({ at: { $lt: olderThan } }).exec()).deletedCount;
  }
}
