import type { z } from 'zod';
import { op } from '../route-spec.js';
import { RULE_NOTES } from '../../../kernel/requirement.js';
import type { ErrorCode } from '../../../kernel/errors.js';
import type { ControlCommand } from '../../../actors/meeting/meeting-rooms.js';
import { ControlResultSchema } from '../../presenters/meeting.presenter.js';
import {
  AnswerHostAccessBody,
  EndMeetingBody,
  HostChangeBody,
  LockBody,
  MuteRequestBody,
  RemoveParticipantBody,
} from '../../../contracts/meeting-controls.schema.js';
import { EventIdParams } from './meetings.schema.js';

const ERRORS: readonly ErrorCode[] = [
  'event_not_found',
  'meeting_not_found',
  'not_meeting_host',
  'invalid_state',
  'validation_failed',
  'not_owner',
  'timeout',
];
const IDEMPOTENT = 'A repeated `requestId` answers the first result and applies once (decision 900).';

/** One control's route: POST /api/meetings/{eventId}/{verb}, a turn of the meeting actor. */
function controlRoute<B extends z.ZodType<{ requestId?: string }>>(def: {
  verb: string;
  body: B;
  summary: string;
  description?: string;
  errors?: readonly ErrorCode[];
  command(body: z.infer<B>): ControlCommand;
}) {
  return op({
    operationId: `meetings.${def.verb}`,
    requires: 'meetings:host',
    note: RULE_NOTES.hostOfMeeting,
    errors: [...ERRORS, ...(def.errors ?? [])],
    method: 'post',
    path: `/:eventId/${def.verb}`,
    params: EventIdParams,
    body: def.body,
    response: ControlResultSchema,
    summary: def.summary,
    description: [def.description, IDEMPOTENT].filter(Boolean).join(' '),
    handle: async (s, { p, params, body }) => {
      const b = body as z.infer<B>;
      return ControlResultSchema.parse(await s.meetingRooms.control(p, params.eventId, def.command(b), b.requestId));
    },
  });
}

/**
 * Host controls of a meeting (decision 900): each is a turn of the event's meeting actor, the same as
 * the hub method of the same name, answering the meeting's control state after it.
 */
export const meetingControlRoutes = [
  controlRoute({
    verb: 'remove',
    body: RemoveParticipantBody,
    errors: ['participant_not_found', 'bad_request'],
    summary: 'Take a member out of the meeting; they come back only when a host admits them again',
    description:
      "The member's sockets leave the meeting and get `removedFromMeeting` (code meeting_access_denied); joining again puts them in the waiting queue.",
    command: (b) => ({ type: 'removeParticipant', userId: b.userId, reason: b.reason }),
  }),
  controlRoute({
    verb: 'end',
    body: EndMeetingBody,
    summary: 'End the meeting for everyone: every socket leaves, the VCS room closes, the event is ended',
    description: 'Ending an ended meeting answers its state again.',
    command: (b) => ({ type: 'endMeeting', reason: b.reason }),
  }),
  controlRoute({
    verb: 'lock',
    body: LockBody,
    summary: 'Lock the meeting: new joins wait in the waiting room, or are refused (meeting_locked) without one',
    command: () => ({ type: 'lockMeeting' }),
  }),
  controlRoute({
    verb: 'unlock',
    body: LockBody,
    summary: 'Unlock the meeting: new joins come in as before the lock',
    command: () => ({ type: 'unlockMeeting' }),
  }),
  controlRoute({
    verb: 'transferHost',
    body: HostChangeBody,
    errors: ['participant_not_found', 'host_not_eligible'],
    summary: 'Hand the host role to a member; the caller stops being a host of this meeting',
    command: (b) => ({ type: 'transferHost', userId: b.userId }),
  }),
  controlRoute({
    verb: 'addHost',
    body: HostChangeBody,
    errors: ['participant_not_found', 'host_not_eligible'],
    summary: 'Make a member one more host of this meeting',
    command: (b) => ({ type: 'addHost', userId: b.userId }),
  }),
  controlRoute({
    verb: 'mute',
    body: MuteRequestBody,
    errors: ['participant_not_found'],
    summary: "Ask a member's client to mute (the muteRequested push); the client mutes itself",
    command: (b) => ({ type: 'muteRequest', userId: b.userId, media: b.media, message: b.message }),
  }),
  controlRoute({
    verb: 'hostAccess',
    body: AnswerHostAccessBody,
    errors: ['host_request_not_found', 'participant_not_found', 'host_not_eligible'],
    summary:
      "Answer a member's requestHostAccess: grant (they become a host) or refuse; they are told (hostAccess push)",
    command: (b) => ({ type: 'answerHostAccess', userId: b.userId, grant: b.grant, message: b.message }),
  }),
];
