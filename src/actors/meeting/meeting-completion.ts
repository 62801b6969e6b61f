import type { MeetingCompleted } from '../../core/meetings/completion.service.js';
import type { MeetingMsg, MeetingState } from './meeting.schema.js';
import { publish, type Ctx, type MeetingActorDeps } from './meeting-state.js';
import { closeMeeting, headsetsOut } from './meeting-controls.js';
import { recordingStopped } from './meeting-consent.js';

type CompleteMsg = Extract<MeetingMsg, { type: 'complete' }>;

/** Anyone the meeting still holds: members, the waiting, joiners held for recording consent. */
function occupied(s: MeetingState): boolean {
  return Object.keys(s.members).length > 0 || s.waiting!.length > 0 || (s.consent?.holds.length ?? 0) > 0;
}

/**
 * Whatever records stops in the name of whoever asked for it (no person stops it: the audit entry names
 * no actor, `via: telemetry`); the members hear `recordingStopped` when the meeting showed it.
 */
async function stopRecording(ctx: Ctx, deps: MeetingActorDeps): Promise<void> {
  const s = ctx.state;
  const t = ctx.address.tenant;
  const owner = await deps.recordingOwner(t, s.eventId);
  if (owner) await deps.stopRecording(t, s.eventId, owner, { via: 'telemetry' });
  if (!owner && !s.recording.active) return;
  s.recording = { ...s.recording, active: false, stoppedAt: new Date().toISOString() };
  recordingStopped(s);
  publish(ctx, 'recordingStopped');
}

/**
 * The conference ended (its telemetry, decision 1090): the consultation completes in a turn of its meeting
 * actor, ordered with every other change of the meeting. The event moves to `completed` (keeping an end
 * endMeeting recorded; a cancelled event stays cancelled and nothing else happens); the first time, the meeting ends for everyone still in it: what records stops,
 * the waiting are told `ended`, the members hear `meetingCompleted` in the meeting's numbered order and
 * leave its rooms, headsets leave the meeting, and `telemetry.complete` is audited. A later delivery of the
 * same end (a duplicate, a retried job, another conference of the event) finds the meeting completed:
 * it raises the flags the new telemetry shows and tells no one. A completed meeting retires its snapshot
 * (decision 1104); what the turn numbered is kept with the event by a second fenced write (the move comes
 * before the turn knows what it tells), so an actor rebuilt after the retention numbers on from it.
 *
 * The actor may have no state (nobody joined through the hub, or its snapshot is gone): then the event
 * says whether it completed before, and the audit trail whether that was told (a turn that moved the
 * event and failed later left no entry, its pushes discarded with it).
 */
export async function complete(ctx: Ctx, deps: MeetingActorDeps, msg: CompleteMsg): Promise<MeetingCompleted> {
  const s = ctx.state;
  const t = ctx.address.tenant;
  const c = msg.completion;
  if (s.completed) {
    const again = await ctx.fencedWrite(() => deps.completeEvent(t, s.eventId, c));
    ctx.retire();
    return { ...again, changed: false, seq: s.seq };
  }
  const done = await ctx.fencedWrite(() => deps.completeEvent(t, s.eventId, c));
  // A cancelled event is not completed (decision 422): its ledger is written, its meeting left as it is.
  if (done.status !== 'completed') return { ...done, seq: s.seq };
  const before = s.seq;
  await stopRecording(ctx, deps);
  const first = done.changed || !(await deps.completionAudited(t, s.eventId));
  const at = new Date().toISOString();
  s.started = true;
  s.ended ??= { by: 'telemetry', at, reason: 'completed' };
  s.completed = { at, conferenceId: c.conferenceId };
  const data = { status: done.status, ...done.flags };
  const { leaving, ...out } =
    first || occupied(s)
      ? closeMeeting(ctx, () => void publish(ctx, 'meetingCompleted', undefined, data))
      : { members: [], waiting: [], leaving: [] };
  if (s.seq !== before)
    await ctx.fencedWrite(async () => {
      await deps.keepLastSeq(t, s.eventId, s.seq);
      return true;
    });
  await headsetsOut(ctx, leaving);
  if (first)
    await deps.audit(t, {
      action: 'telemetry.complete',
      outcome: 'success',
      eventId: s.eventId,
      details: { conferenceId: c.conferenceId, ledgerEntries: c.ledgerEntries, ...done.flags, ...out },
    });
  ctx.retire();
  return { ...done, seq: s.seq };
}
