import { z } from 'zod';
import { AppError } from '../../../core/errors.js';
import { Id } from '../../../core/paging.js';
import { op, type RouteGroup } from '../route-spec.js';

const StartRecordingQuery = z.object({
  eventId: Id,
  /**
   * The participant the recording is attributed to: the caller (default). Naming another participant
   * needs `tenant:admin` and is audited as the administrator acting for them.
   */
  userId: Id.optional(),
});

const RecordingStatus = z.object({
  eventId: z.string(),
  state: z.string(),
  session: z.number().int(),
  jobId: z.string().optional(),
});

/** /api/tenant/startrecording: hands the request to the recording job after checking membership. */
export const recordingRoutes: RouteGroup = {
  base: '/api/tenant',
  tag: 'Tenant',
  routes: [
    op({
      operationId: 'tenant.startRecording',
      errors: ['event_not_found', 'invalid_state', 'service_unavailable', 'recording_consent_required'],
      method: 'get',
      path: '/startrecording',
      query: StartRecordingQuery,
      response: RecordingStatus,
      summary:
        'Request recording start for an event (queued; the recording job starts it on the video conferencing system)',
      description:
        'When the tenant records only with consent (TenantConfig `meetings.recordingConsent`), this answers 409 ' +
        '`recording_consent_required`: the hub method startRecording asks those present and starts once they agree.',
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
        const r = await s.recording.requestStart(p.tenant, query.eventId, userId, {
          actorId: p.userId,
          via: 'rest',
          ...(req.ip ? { ip: req.ip } : {}),
        });
        return {
          eventId: r.eventId,
          state: r.state,
          session: r.session,
          ...(r.jobId ? { jobId: String(r.jobId) } : {}),
        };
      },
    }),
  ],
};
