import { ConsentAnswerRequest } from '../../actors/meeting.schema.js';
import { consentToRecording } from '../../actors/meeting-rooms.js';
import { fromZod } from '../../core/errors.js';
import { need, type GraphQLContext } from './context.js';
import { withoutNulls } from './args.js';

/**
 * Recording consent as a mutation (decision 910): the permission table first, the hub's request
 * schema, then the same meeting actor turn as hub consentToRecording and the REST route.
 */
export const recordingConsentMutations = {
  consentToRecording: async (_: unknown, args: Record<string, unknown>, ctx: GraphQLContext) => {
    const p = need(ctx, 'graphql.consentToRecording');
    const parsed = ConsentAnswerRequest.safeParse(withoutNulls(args));
    if (!parsed.success) throw fromZod(parsed.error);
    const r = (await consentToRecording(ctx.services.meetingRooms, p, parsed.data)) as {
      requestId: string;
      state: string;
      consent: boolean;
      entered?: unknown;
    };
    return {
      eventId: parsed.data.eventId,
      requestId: r.requestId,
      state: r.state,
      consent: r.consent,
      entered: !!r.entered,
    };
  },
};
