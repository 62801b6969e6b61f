/**
 * Event (consultation) status machine. The spec names only `completed`; the rest is ours
 * (docs/event-status.md):
 *   scheduled --initEvent (room assigned)--> started --conference ended--> ended --telemetry completion--> completed
 *   scheduled --cancel--> cancelled;  started --telemetry completion (end seen in the same batch)--> completed
 */
import type { EventRecord, EventStatus } from '../../data/models/event.model.js';

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

/** Statuses in which the event's meeting is over: no one joins it and no host control applies. */
export const MEETING_OVER: readonly EventStatus[] = ['ended', 'completed', 'cancelled'];

/**
 * How an event's meeting ended, as the event records it: what a meeting actor without a snapshot rebuilds
 * the ended meeting from (decision 1104). `seq` is the meeting's last meetingEvent number kept with the
 * end (0 when none was: an event cancelled before any meeting, or ended before it was kept).
 */
export interface MeetingEnd {
  status: 'ended' | 'completed' | 'cancelled';
  /** When (ISO): the end, else the completion or the cancellation. */
  at: string;
  seq: number;
}

/** The meeting's end as the event records it, or null while the meeting is not over. */
export function meetingEndOf(e: EventRecord): MeetingEnd | null {
  if (!MEETING_OVER.includes(e.status as EventStatus)) return null;
  const at = e.endedAt ?? e.completedAt ?? e.cancelledAt ?? e.updatedAt ?? new Date();
  return { status: e.status as MeetingEnd['status'], at: at.toISOString(), seq: e.meetingSeq ?? 0 };
}
