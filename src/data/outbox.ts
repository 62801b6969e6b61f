import { Schema } from 'mongoose';

/**
 * An outbound event stored inside the document whose change it reports, written by the same
 * single-document update (decision 890): MongoDB applies one document's update atomically, so the
 * change and its announcement are committed together or not at all, without a transaction. The relay
 * (src/core/webhooks/outbox-relay.service.ts) copies entries into the tenant's event log and pulls them.
 */
export interface OutboxEntry {
  /** Stable event id: the `webhook-id` of every delivery of this event, and the log's de-duplication key. */
  id: string;
  type: string;
  /** The consultation (event) the change belongs to, when there is one: the delivery order is per log. */
  consultationId?: string;
  at: Date;
  data: Record<string, unknown>;
}

/** The field, on every collection that announces its changes. Absent until a change announces something. */
export const OUTBOX_FIELD = { type: [Schema.Types.Mixed], default: undefined } as const;

/** Models whose documents carry an outbox; the relay sweeps exactly these. */
export const OUTBOX_SOURCES = ['Event', 'TelemetryRecord', 'MediaFile', 'Import'] as const;
export type OutboxSource = (typeof OUTBOX_SOURCES)[number];

/** Documents a writer just gave outbox entries: the relay reads those by `_id` instead of looking for outboxes. */
export interface OutboxWrites {
  source: OutboxSource;
  ids: readonly unknown[];
  /**
   * The whole outbox each document was created with (aligned with `ids`), from a writer whose
   * documents get no entries afterwards (telemetry records): the relay publishes these without
   * reading the documents.
   */
  outboxes?: readonly (readonly OutboxEntry[])[];
}

/**
 * The index the relay's look for pending entries reads on MongoDB (see PENDING_FILTER in the event
 * log's repository), on every collection in OUTBOX_SOURCES.
 */
export const OUTBOX_INDEX = { 'outbox.at': 1 } as const;

/** The update fragment that announces `entries` together with the change it is merged into. */
export function pushOutbox(entries: readonly OutboxEntry[] | undefined): Record<string, unknown> {
  return entries?.length ? { $push: { outbox: { $each: entries } } } : {};
}

/** Entries (with where they are) in the order the log takes them: by time, then id. */
export function inOrder<T extends { entry: OutboxEntry }>(entries: T[]): T[] {
  return entries.sort((a, b) => a.entry.at.getTime() - b.entry.at.getTime() || (a.entry.id < b.entry.id ? -1 : 1));
}
