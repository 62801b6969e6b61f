import { z } from 'zod';
import { ConsentAnswerRequest, StartRecordingRequest, StopRecordingRequest } from '../../contracts/meeting.schema.js';
import { dedupe } from '../../actors/meeting/meeting-rooms.js';
import { callerOf, method } from '../method.js';
import { RULE_NOTES } from '../../kernel/requirement.js';

const meetingAt = (tenant: string, eventId: string) => ({ tenant, kind: 'meeting' as const, id: eventId });

/**
 * Recording and its consent (decision 910): startRecording records at once, or, when the tenant
 * asks for consent, opens a consent request in the meeting actor; consentToRecording answers it;
 * stopRecording stops it. Start and stop take a request id, so a retry whose answer was lost applies once.
 */
export const consentMethods = [
  method({
    name: 'startRecording',
    requires: 'meetings:record',
    args: z.tuple([StartRecordingRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(
        meetingAt(socket.data.tenant, req.eventId),
        {
          type: 'startRecording',
          caller: callerOf(socket),
          ...(req.requestId ? { requestId: req.requestId } : {}),
          ...(req.reason ? { reason: req.reason } : {}),
        },
        dedupe(socket.data.principal, 'startRecording', req.requestId),
      ),
  }),
  method({
    name: 'stopRecording',
    requires: 'meetings:record',
    args: z.tuple([StopRecordingRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(
        meetingAt(socket.data.tenant, req.eventId),
        { type: 'stopRecording', caller: callerOf(socket) },
        dedupe(socket.data.principal, 'stopRecording', req.requestId),
      ),
  }),
  method({
    name: 'consentToRecording',
    requires: 'meetings:join',
    note: RULE_NOTES.askedForConsent,
    args: z.tuple([ConsentAnswerRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(meetingAt(socket.data.tenant, req.eventId), {
        type: 'consentToRecording',
        caller: callerOf(socket),
        requestId: req.requestId,
        consent: req.consent,
      }),
  }),
];
