import { z } from 'zod';
import { StartRecordingRequest, StopRecordingRequest, type MeetingDetails } from '../../../contracts/meeting.schema.js';
import { AppError, type ErrorCode } from '../../../kernel/errors.js';
import { Id } from '../../../kernel/paging.js';
import type { Principal } from '../../../kernel/principal.js';
import type { Services } from '../../../app/index.js';
import { ConsentView } from '../../presenters/recording-consent.presenter.js';
import { op, type RouteGroup } from '../route-spec.js';

const StartRecordingQuery = z.object({
  eventId: Id,
  /**
   * The participant the recording is attributed to: the caller (default). Naming another participant
   * needs `tenant:admin` and is audited as the administrator acting for them.
   */
  userId: Id.optional(),
  requestId: StartRecordingRequest.shape.requestId,
});
const StopRecordingQuery = z.object({ eventId: Id, requestId: StopRecordingRequest.shape.requestId });

const RecordingStatus = z.object({
  eventId: z.string(),
  state: z
    .string()
    .describe(
      '`starting`, `recording`, `stopping`, `stopped`, `idle`, or `awaiting_consent` while a consent request is open',
    ),
  session: z.number().int().describe('The current (or last) recording session of the event; 0 when never recorded'),
  jobId: z.string().optional(),
  recordingConsent: ConsentView.optional().describe('The consent request the start opened (decision 910)'),
});

const ERRORS: ErrorCode[] = [
  'event_not_found',
  'meeting_not_found',
  'forbidden',
  'invalid_state',
  'service_unavailable',
  'recording_consent_required',
  'not_owner',
  'timeout',
];

/** The recording's state after the meeting actor's turn: the meeting's view, the session from the recording service. */
async function present(s: Services, p: Principal, eventId: string, d: MeetingDetails) {
  const status = await s.recording.status(p.tenant, eventId);
  const awaiting = !d.recording.active && d.recordingConsent?.state === 'pending';
  return {
    eventId,
    state: awaiting ? 'awaiting_consent' : status.state,
    session: status.session,
    ...(d.recordingConsent ? { recordingConsent: d.recordingConsent } : {}),
  };
}

/**
 * /api/tenant/startrecording and /stoprecording: turns of the event's meeting actor, the same as the hub's
 * startRecording / stopRecording (decision 1010): members of the meeting, or hosts of the event.
 */
export const recordingRoutes: RouteGroup = {
  base: '/api/tenant',
  tag: 'Tenant',
  routes: [
    op({
      operationId: 'tenant.startRecording',
      requires: 'meetings:record',
      note: 'a meeting actor turn: members of the running meeting or hosts of the event; attributed to the caller; `userId` naming someone else needs tenant:admin (audited as acting for them)',
      errors: ERRORS,
      method: 'get',
      path: '/startrecording',
      query: StartRecordingQuery,
      response: RecordingStatus,
      summary:
        'Start recording a running meeting (a member of it, or a host of the event): the same as the hub method startRecording',
      description:
        'Every member gets `recordingStarted` and the meeting shows the recording. When the tenant records only with ' +
        'consent (TenantConfig `meetings.recordingConsent`), it opens a consent request instead (`state: awaiting_consent`) ' +
        'and the recording starts once everyone asked agreed. A participant who has not joined is refused (`forbidden`); ' +
        'a meeting that has not started is `invalid_state`.',
      handle: async (s, { p, query, req }) => {
        const userId = query.userId ?? p.userId;
        const onBehalf = userId !== p.userId;
        if (onBehalf && !p.permissions.has('tenant:admin'))
          throw new AppError(
            'permission_denied',
            "Starting a recording for another participant requires the 'tenant:admin' permission",
          );
        if (!onBehalf && !(await s.meetings.isParticipant(p.tenant, query.eventId, p.userId)))
          throw new AppError('event_not_found', `No event ${query.eventId}`);
        if (onBehalf && !(await s.meetings.isParticipant(p.tenant, query.eventId, userId))) {
          throw new AppError('validation_failed', 'query.userId: not a participant of the event', {
            errors: [{ field: 'query.userId', message: 'not a participant of the event' }],
          });
        }
        const d = await s.meetingRooms.recording(p, query.eventId, 'start', {
          onBehalfOf: userId,
          ...(req.ip ? { ip: req.ip } : {}),
          ...(query.requestId ? { requestId: query.requestId } : {}),
        });
        return present(s, p, query.eventId, d);
      },
    }),
    op({
      operationId: 'tenant.stopRecording',
      requires: 'meetings:record',
      note: 'a meeting actor turn: members of the meeting or hosts of the event; stops whatever records',
      errors: ERRORS,
      method: 'get',
      path: '/stoprecording',
      query: StopRecordingQuery,
      response: RecordingStatus,
      summary:
        "Stop the meeting's recording (a member of it, or a host of the event): the same as the hub method stopRecording",
      description:
        'Every member gets `recordingStopped`; a recording is stopped whoever started it. Stopping a meeting that records nothing answers its state. ' +
        'A `requestId` makes a retry (its answer lost) answer what the first attempt did, as the hub method does.',
      handle: async (s, { p, query, req }) => {
        if (!(await s.meetings.isParticipant(p.tenant, query.eventId, p.userId)))
          throw new AppError('event_not_found', `No event ${query.eventId}`);
        const d = await s.meetingRooms.recording(p, query.eventId, 'stop', {
          ...(req.ip ? { ip: req.ip } : {}),
          ...(query.requestId ? { requestId: query.requestId } : {}),
        });
        return present(s, p, query.eventId, d);
      },
    }),
  ],
};
