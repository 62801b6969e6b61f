/**
 * Event (consultation) status machine. The spec names only `completed`; the rest is ours
 * (docs/event-status.md):
 *   scheduled --initEvent (room assigned)--> started --conference ended--> ended --telemetry completion--> completed
 *   scheduled --cancel--> cancelled;  started --telemetry completion (end seen in the same batch)--> completed
 */
export const EVENT_STATUSES = ['scheduled', 'started', 'ended', 'completed', 'cancelled'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

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
