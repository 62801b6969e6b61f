import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AcceptCallRequest, AddParticipantRequest, CallRef, InitCallRequest } from '../../contracts/call.schema.js';
import type { ActorAddress } from '../../actors/runtime/types.js';
import { callerOf, method } from '../method.js';
import type { HubSocket } from '../hub.types.js';

const callAt = (socket: HubSocket, callId: string): ActorAddress => ({
  tenant: socket.data.tenant,
  kind: 'call',
  id: callId,
});

/** initCall, acceptCall, cancelCall, endCall, addParticipant: each one ask of the call's actor. */
export const callMethods = [
  method({
    name: 'initCall',
    requires: 'calls:make',
    args: z.tuple([InitCallRequest]),
    run: (ctx, socket, [req]) => {
      const callId = req.callId ?? randomUUID();
      const caller = callerOf(socket);
      return ctx.actors.ask(
        callAt(socket, callId),
        { type: 'init', caller, callerName: socket.data.principal.username, req: { ...req, callId } },
        { dedupeId: `initCall:${socket.id}:${callId}` },
      );
    },
  }),
  method({
    name: 'acceptCall',
    requires: 'calls:make',
    args: z.tuple([AcceptCallRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(callAt(socket, req.callId), { type: 'accept', caller: callerOf(socket) }),
  }),
  method({
    name: 'cancelCall',
    requires: 'calls:make',
    args: z.tuple([CallRef]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(callAt(socket, req.callId), { type: 'cancel', caller: callerOf(socket), reason: req.reason }),
  }),
  method({
    name: 'endCall',
    requires: 'calls:make',
    args: z.tuple([CallRef]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(callAt(socket, req.callId), { type: 'end', caller: callerOf(socket), reason: req.reason }),
  }),
  method({
    name: 'addParticipant',
    requires: 'calls:make',
    args: z.tuple([AddParticipantRequest]),
    run: (ctx, socket, [req]) =>
      ctx.actors.ask(callAt(socket, req.callId), {
        type: 'addParticipant',
        caller: callerOf(socket),
        userId: req.userId,
      }),
  }),
];
