import type { z } from 'zod';
import type { ControlCommand } from '../../actors/meeting/meeting-rooms.js';
import {
  type ControlResult,
  AnswerHostAccessRequest,
  EndMeetingRequest,
  HostChangeRequest,
  LockRequest,
  MuteRequestRequest,
  RemoveParticipantRequest,
} from '../../contracts/meeting-controls.schema.js';
import { AdmitRequest, DenyRequest } from '../../contracts/meeting.schema.js';
import { need, type GraphQLContext } from './context.js';
import type { GraphQLOperation } from './operations.js';
import { parseArgs, parseUnchecked, type Fits } from './args.js';
import type { MutationResolvers } from './generated/types.js';

/** The arguments of a mutation as the SDL types them (generated/types.ts). */
type ArgsOf<K extends keyof MutationResolvers> = Parameters<
  Extract<MutationResolvers[K], (...a: never[]) => unknown>
>[1];

/**
 * One host control as a mutation: what the operation requires first (operations.ts), the arguments through the same schema as
 * the hub's (which the compiler holds to the SDL's arguments), then the same meeting actor turn as the
 * hub and REST (decision 900).
 */
function control<
  K extends keyof MutationResolvers & GraphQLOperation,
  S extends z.ZodType<{ eventId: string; requestId?: string }>,
>(name: K, schema: S & Fits<ArgsOf<K>, S>, command: (req: z.output<S>) => ControlCommand) {
  return async (_parent: unknown, args: ArgsOf<K>, ctx: GraphQLContext): Promise<ControlResult> => {
    const p = need(ctx, name);
    const req = parseUnchecked(schema, args as object);
    return ctx.services.meetingRooms.control(p, req.eventId, command(req), req.requestId);
  };
}

export const meetingControlMutations = {
  admit: async (_parent, args, ctx) => {
    const p = need(ctx, 'admit');
    return ctx.services.meetingRooms.admit(p, parseArgs(AdmitRequest, args));
  },
  deny: async (_parent, args, ctx) => {
    const p = need(ctx, 'deny');
    return ctx.services.meetingRooms.deny(p, parseArgs(DenyRequest, args));
  },
  removeParticipant: control('removeParticipant', RemoveParticipantRequest, (r) => ({
    type: 'removeParticipant',
    userId: r.userId,
    reason: r.reason,
  })),
  endMeeting: control('endMeeting', EndMeetingRequest, (r) => ({ type: 'endMeeting', reason: r.reason })),
  lockMeeting: control('lockMeeting', LockRequest, () => ({ type: 'lockMeeting' })),
  unlockMeeting: control('unlockMeeting', LockRequest, () => ({ type: 'unlockMeeting' })),
  transferHost: control('transferHost', HostChangeRequest, (r) => ({ type: 'transferHost', userId: r.userId })),
  addHost: control('addHost', HostChangeRequest, (r) => ({ type: 'addHost', userId: r.userId })),
  muteRequest: control('muteRequest', MuteRequestRequest, (r) => ({
    type: 'muteRequest',
    userId: r.userId,
    media: r.media,
    message: r.message,
  })),
  answerHostAccess: control('answerHostAccess', AnswerHostAccessRequest, (r) => ({
    type: 'answerHostAccess',
    userId: r.userId,
    grant: r.grant,
    message: r.message,
  })),
} satisfies MutationResolvers;
