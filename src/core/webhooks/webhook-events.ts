import { Types } from 'mongoose';
import type { OutboxEntry, OutboxWrites } from '../../data/outbox.js';

/** Every event type a subscription can ask for (docs/webhooks.md describes each payload). */
export const WEBHOOK_EVENT_TYPES = [
  'consultation.scheduled',
  'consultation.started',
  'consultation.ended',
  'consultation.completed',
  'consultation.cancelled',
  'participant.joined',
  'participant.left',
  'recording.available',
  'import.finished',
  'media.uploaded',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * An outbox entry announcing a change, to be written by the same update as the change (decision
 * 890). The id is time-ordered (an ObjectId), unique, and becomes the `webhook-id` of every delivery.
 */
export function announce(
  type: WebhookEventType,
  consultationId: string | undefined,
  data: Record<string, unknown>,
  at = new Date(),
): OutboxEntry {
  return {
    id: `evt_${new Types.ObjectId().toHexString()}`,
    type,
    ...(consultationId ? { consultationId } : {}),
    at,
    data: { ...(consultationId ? { consultationId } : {}), ...data },
  };
}

/**
 * Called after a change with an outbox entry was written: publishes it before the caller answers, so
 * the event is in the log (and replayable) once the request that caused it returns. Never rejects: a
 * failed publish is left to the sweep. A caller that names the documents it wrote (`written`) has
 * only those read; without it the relay looks for every pending entry of the tenant.
 */
export type AnnounceHook = (tenant: string, written?: OutboxWrites) => Promise<void>;
