import { Schema, type InferSchemaType, type Types } from 'mongoose';

const SecretSchema = new Schema(
  {
    id: { type: String, required: true },
    /**
     * The `whsec_` secret (the Standard Webhooks form) sealed by the key vault (a JWE bound to the tenant
     * and secret id, decision 1043); values written before sealing are in clear until resealed.
     */
    value: { type: String, required: true },
    createdAt: { type: Date, required: true },
    /** Set on the previous secret by a rotation: it still signs until then. */
    expiresAt: Date,
  },
  { _id: false },
);

/**
 * A tenant's webhook subscription. `cursor` is the sequence number of the last event of the tenant's
 * event log this subscription is done with (delivered, or not of its types); `lease` makes one
 * delivery run at a time per subscription, so deliveries go out in log order.
 */
export const WebhookSubscriptionSchema = new Schema(
  {
    url: { type: String, required: true },
    description: String,
    types: { type: [String], default: [] },
    secrets: { type: [SecretSchema], default: [] },
    status: { type: String, enum: ['active', 'paused'], default: 'active', required: true },
    pausedReason: String,
    pausedAt: Date,
    cursor: { type: Number, default: 0, required: true },
    failures: { type: Number, default: 0 },
    lastError: String,
    lastAttemptAt: Date,
    lastSuccessAt: Date,
    nextAttemptAt: Date,
    lease: { token: String, until: Date },
    /** Delivery runs started so far: names the next run's job (one job per run, never reused). */
    runs: { type: Number, default: 0 },
  },
  { timestamps: true },
);

/**
 * The tenant's event log: every announced change once, numbered without gaps in the order it was
 * published (`_id` is the sequence number, the replay cursor). `eventId` is the stable `webhook-id`.
 */
export const WebhookEventSchema = new Schema(
  {
    _id: { type: Number, required: true },
    eventId: { type: String, required: true, unique: true },
    type: { type: String, required: true },
    consultationId: String,
    occurredAt: { type: Date, required: true },
    publishedAt: { type: Date, required: true },
    data: { type: Schema.Types.Mixed, default: {} },
  },
  { versionKey: false },
);
WebhookEventSchema.index({ publishedAt: 1 });

/** One delivery attempt of one event to one subscription: what the admin sees of an endpoint's health. */
export const WebhookAttemptSchema = new Schema(
  {
    subscriptionId: { type: Schema.Types.ObjectId, required: true },
    eventId: { type: String, required: true },
    seq: { type: Number, required: true },
    at: { type: Date, required: true },
    ok: { type: Boolean, required: true },
    status: Number,
    latencyMs: { type: Number, required: true },
    error: String,
  },
  { versionKey: false },
);
WebhookAttemptSchema.index({ subscriptionId: 1, at: -1 });
WebhookAttemptSchema.index({ at: 1 });

export type WebhookSubscriptionDoc = InferSchemaType<typeof WebhookSubscriptionSchema>;
export type WebhookSubscriptionRecord = WebhookSubscriptionDoc & { _id: Types.ObjectId; createdAt: Date };
export type WebhookEventDoc = InferSchemaType<typeof WebhookEventSchema>;
export type WebhookEventRecord = WebhookEventDoc & { _id: number };
export type WebhookAttemptDoc = InferSchemaType<typeof WebhookAttemptSchema>;
export type WebhookAttemptRecord = WebhookAttemptDoc & { _id: Types.ObjectId };
