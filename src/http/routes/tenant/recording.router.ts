import { z } from 'zod';
import type { Router } from 'express';
import type { Services } from '../../../composition.js';
import { AppError } from '../../../core/errors.js';
import { Id } from '../../../core/paging.js';
import { op, routerFor, type RouteGroup } from '../../openapi/route-spec.js';

const StartRecordingQuery = z.object({
  eventId: Id,
  /** The participant asking for the recording; defaults to the caller and must belong to the event. */
  userId: Id.optional(),
});

const RecordingStatus = z.object({ eventId: z.string(), state: z.string(), session: z.number().int(), jobId: z.string().optional() });

/** /api/tenant/startrecording: hands the request to the recording job after checking membership. */
export const recordingRoutes: RouteGroup = {
  base: '/api/tenant',
  tag: 'Tenant',
  routes: [
    op({
      operationId: 'tenant.startRecording', method: 'get', path: '/startrecording', query: StartRecordingQuery, response: RecordingStatus,
      summary: 'Request recording start for an event (queued; the recording job starts it on the video conferencing system)',
      handle: async (s, { p, query }) => {
        const userId = query.userId ?? p.userId;
        const callerIn = await s.meetings.isParticipant(p.tenant, query.eventId, p.userId);
        if (!callerIn) throw new AppError('event_not_found', `No event ${query.eventId}`);
        if (userId !== p.userId && !(await s.meetings.isParticipant(p.tenant, query.eventId, userId))) {
          throw new AppError('validation_failed', 'query.userId: not a participant of the event', { errors: [{ field: 'query.userId', message: 'not a participant of the event' }] });
        }
        const r = await s.recording.requestStart(p.tenant, query.eventId, userId);
        return { eventId: r.eventId, state: r.state, session: r.session, ...(r.jobId ? { jobId: String(r.jobId) } : {}) };
      },
    }),
  ],
};

export function recordingRouter(services: Services): Router {
  return routerFor(recordingRoutes, services);
}
