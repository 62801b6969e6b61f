import { ConsentAnswerRequest } from '../../contracts/meeting.schema.js';
import { consentToRecording } from '../../actors/meeting/meeting-rooms.js';
import { need } from './context.js';
import { parseArgs } from './args.js';
import type { MutationResolvers } from './generated/types.js';

/**
 * Recording consent as a mutation (decision 910): what it requires first (operations.ts), the hub's request
 * schema, then the same meeting actor turn as hub consentToRecording and the REST route.
 */
export const recordingConsentMutations = {
  consentToRecording: async (_parent, args, ctx) => {
    const p = need(ctx, 'consentToRecording');
    const req = parseArgs(ConsentAnswerRequest, args);
    const r = await consentToRecording(ctx.services.meetingRooms, p, req);
    return { eventId: req.eventId, requestId: r.requestId, state: r.state, consent: r.consent, entered: !!r.entered };
  },
} satisfies MutationResolvers;
