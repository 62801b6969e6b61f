import { z } from 'zod';
import { Id } from '../../../kernel/paging.js';
import { WEBHOOK_EVENT_TYPES } from '../../../core/webhooks/webhook-events.js';

export const EventType = z.enum(WEBHOOK_EVENT_TYPES);
const Cursor = z.string().regex(/^\d{1,15}$/, 'must be a cursor (a sequence number)');
const Secret = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/, 'must be whsec_ followed by base64')
  .max(100);

export const SubscriptionParams = z.object({ subscriptionId: Id });

export const CreateSubscriptionBody = z.object({
  url: z.string().min(1).max(2000),
  types: z.array(EventType).min(1).max(WEBHOOK_EVENT_TYPES.length),
  description: z.string().max(500).optional(),
  /** A secret of the receiver's choosing (Standard Webhooks form); generated when absent. */
  secret: Secret.optional(),
});

export const RotateSecretBody = z
  .object({
    secret: Secret.optional(),
    /** How long the previous secret keeps signing beside the new one (default WEBHOOK_SECRET_GRACE_HOURS). */
    graceHours: z
      .number()
      .int()
      .min(0)
      .max(24 * 30)
      .optional(),
  })
  .default({});

export const ReplayBody = z.object({ after: Cursor });

export const EventsQuery = z.object({
  after: Cursor.optional(),
  take: z.coerce.number().int().min(1).max(1000).default(100),
  /** Comma-separated event types. */
  types: z
    .string()
    .max(500)
    .optional()
    .transform((s) => (s ? s.split(',').filter(Boolean) : undefined))
    .pipe(z.array(EventType).optional()),
});

export const AttemptsQuery = z.object({ take: z.coerce.number().int().min(1).max(1000).default(50) });

export const Subscription = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().optional(),
  types: z.array(z.string()),
  status: z.enum(['active', 'paused']),
  pausedReason: z.string().optional(),
  pausedAt: z.string().optional(),
  cursor: z.string(),
  consecutiveFailures: z.number().int(),
  lastError: z.string().optional(),
  lastAttemptAt: z.string().optional(),
  lastSuccessAt: z.string().optional(),
  nextAttemptAt: z.string().optional(),
  secrets: z.array(z.object({ id: z.string(), createdAt: z.string(), expiresAt: z.string().optional() })),
  createdAt: z.string(),
});

export const SubscriptionWithSecret = z.object({
  subscription: Subscription,
  /** Shown once: the receiver verifies signatures with it. */
  secret: z.string(),
});

export const SubscriptionList = z.object({ subscriptions: z.array(Subscription) });

export const Attempt = z.object({
  eventId: z.string(),
  sequence: z.string(),
  at: z.string(),
  ok: z.boolean(),
  status: z.number().int().optional(),
  latencyMs: z.number(),
  error: z.string().optional(),
});
export const AttemptList = z.object({ attempts: z.array(Attempt) });

export const LoggedEvent = z.object({
  sequence: z.string(),
  id: z.string(),
  type: z.string(),
  timestamp: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export const EventPage = z.object({ events: z.array(LoggedEvent), next: z.string(), head: z.string() });
