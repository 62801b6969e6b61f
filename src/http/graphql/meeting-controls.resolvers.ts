import type { z } from 'zod';
import type { OperationId } from '../../auth/permission-table.js';
import type { ControlCommand } from '../../actors/meeting-rooms.js';
import {
  AnswerHostAccessRequest,
  EndMeetingRequest,
  HostChangeRequest,
  LockRequest,
  MuteRequestRequest,
  RemoveParticipantRequest,
} from '../../actors/meeting-controls.schema.js';
import { AdmitRequest, DenyRequest } from '../../actors/meeting.schema.js';
import { fromZod } from '../../core/errors.js';
import { need, type GraphQLContext } from './context.js';
import { withoutNulls } from './args.js';

type Args = Record<string, unknown>;

/**
 * One host control as a mutation: the permission table first, the arguments through the same schema as
 * the hub's, then the same meeting actor turn as the hub and REST (decision 900).
 */
function control<S extends z.ZodType<{ eventId: string; requestId?: string }>>(
  name: string,
  schema: S,
  command: (req: z.infer<S>) => ControlCommand,
) {
  return async (_: unknown, args: Args, ctx: GraphQLContext) => {
    const p = need(ctx, `graphql.${name}` as OperationId);
    const parsed = schema.safeParse(withoutNulls(args));
    if (!parsed.success) throw fromZod(parsed.error);
    const req = parsed.data as z.infer<S>;
    return ctx.services.meetingRooms.control(p, req.eventId, command(req), req.requestId);
  };
}

/** Parses a waiting-room decision's arguments with the hub's schema, after the permission table. */
function parsed<S extends z.ZodType>(ctx: GraphQLContext, id: OperationId, schema: S, args: Args) {
  const p = need(ctx, id);
  const r = schema.safeParse(withoutNulls(args));
  if (!r.success) throw fromZod(r.error);
  return { p, req: r.data as z.infer<S> };
}

export const meetingControlMutations = {
  admit: async (_: unknown, args: Args, ctx: GraphQLContext) => {
    const { p, req } = parsed(ctx, 'graphql.admit', AdmitRequest, args);
    return ctx.services.meetingRooms.admit(p, req);
  },
  deny: async (_: unknown, args: Args, ctx: GraphQLContext) => {
    const { p, req } = parsed(ctx, 'graphql.deny', DenyRequest, args);
    return ctx.services.meetingRooms.deny(p, req);
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
};
