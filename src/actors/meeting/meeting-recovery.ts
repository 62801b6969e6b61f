import type { MeetingEnd } from '../../core/meetings/event-status.js';
import type { ActorAddress } from '../runtime/types.js';
import type { MeetingState } from './meeting.schema.js';
import type { MeetingActorDeps } from './meeting-state.js';

/**
 * A meeting actor without a snapshot (decision 1104). An ended or completed meeting retires its snapshot,
 * so past the retention its actor starts afresh: it reads the event once per such activation (not in the
 * turns of a live meeting, whose actor has a snapshot) and, when the event says the meeting is over, starts
 * from the ended meeting instead of one not yet begun.
 */
export async function recoverMeeting(
  deps: Pick<MeetingActorDeps, 'meetingEnd'>,
  address: ActorAddress,
  initial: MeetingState,
): Promise<MeetingState> {
  const end = await deps.meetingEnd(address.tenant, address.id);
  return end ? endedFromEvent(initial, end) : initial;
}

/**
 * The ended meeting as its event keeps it: `ended` (joins and host controls refused, endMeeting answered
 * again without a second audit entry), `started` unless the event was cancelled before its meeting, and
 * the last seq kept with the end, which details show and after which a later completion is numbered.
 * Members and the waiting are none, as after any end. Who ended it (`by: 'event'` stands for that), the
 * lock, the shared image, the recording's times and the consent requests are not kept: nothing shows them
 * after the end. `completed` is left to the completion turn, which asks the audit trail, as for an
 * actor without state, whether the completion was told.
 */
export function endedFromEvent(initial: MeetingState, end: MeetingEnd): MeetingState {
  return { ...initial, started: end.status !== 'cancelled', seq: end.seq, ended: { by: 'event', at: end.at } };
}
