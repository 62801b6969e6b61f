/**
 * Event (consultation) status machine. The spec names only `completed`; the rest is ours
 * (docs/event-status.md):
 *   scheduled --initEvent (room assigned)--> started --conference ended--> ended --telemetry completion--> completed
 *   scheduled --cancel--> cancelled;  started --telemetry completion (end seen in the same batch)--> completed
 */
import type { EventStatus } from '../../data/models/event.model.js';

export { EVENT_STATUSES, type EventStatus } from '../../data/models/event.model.js';

export const EVENT_TRANSITIONS: Readonly<Record<EventStatus, readonly EventStatus[]>> = {
  scheduled: ['started', 'cancelled'],
  started: ['ended', 'completed'],
  ended: ['completed'],
  completed: [],
  cancelled: [],
};

export function canTransition(from: EventStatus, to: EventStatus): boolean {
  return EVENT_TRANSITIONS[from].includes(to);
}

/** Statuses from which `to` may be reached in one step; used as the guard of atomic updates. */
export function sourcesOf(to: EventStatus): EventStatus[] {
  return (Object.keys(EVENT_TRANSITIONS) as EventStatus[]).filter((s) => EVENT_TRANSITIONS[s].includes(to));
}
