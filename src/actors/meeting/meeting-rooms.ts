import { AppError } from '../../kernel/errors.js';
import type { Principal } from '../../kernel/principal.js';
import { callerOfPrincipal, type Caller } from '../../kernel/caller.js';
import type {
  AdmitRequest,
  ConsentAnswerRequest,
  DenyRequest,
  MeetingDetails,
  WaitingRoomView,
} from '../../contracts/meeting.schema.js';
import type { MeetingMsg } from './meeting.schema.js';
import type { ConsentAnswerResult } from './meeting-consent-state.js';
import type { ControlResult } from '../../contracts/meeting-controls.schema.js';
import type { MeetingControlMsg } from './meeting-controls.schema.js';
import type { ActorAddress, ActorSystem, AskOptions } from '../runtime/types.js';
import type { EventCompletion, MeetingCompleted } from '../../core/meetings/completion.service.js';

/**
 * The meeting actor as REST, GraphQL and the telemetry completion job reach it: join by code, the
 * waiting room and its admissions, host controls, recording and the conference's completion are turns
 * of the event's meeting actor whatever the entrance, so a REST admit and a hub admit are ordered with
 * every other meeting change. The composition gives it, up front, the node's actor client (`actors`,
 * resolved on use): the `actors` role's own system, the hub's client, or a client started for a node
 * without either (HTTP-only, workers-only); undefined until a role started one.
 */
export class MeetingRooms {
  constructor(
    private readonly deps: {
      eventIdForCode(tenant: string, meetingCode: string): Promise<string>;
      actors(): Pick<ActorSystem, 'ask'> | undefined;
    },
  ) {}

  /** One turn of the event's meeting actor for a REST or GraphQL caller. */
  send<R>(p: Principal, eventId: string, msg: MeetingMsg, opts?: AskOptions): Promise<R> {
    return this.ask(p, eventId, msg, opts);
  }

  private ask<R>(p: Pick<Principal, 'tenant'>, eventId: string, msg: MeetingMsg, opts?: AskOptions): Promise<R> {
    const system = this.deps.actors();
    if (!system) throw new AppError('service_unavailable', 'Meetings are not reachable from this node yet');
    const to: ActorAddress = { tenant: p.tenant, kind: 'meeting', id: eventId };
    return system.ask<R>(to, msg, opts);
  }

  /**
   * The conference ended (telemetry completion job): the completion turn of the event's meeting actor,
   * which ends the meeting for everyone in it and completes the event (decision 1090). No person asks.
   */
  complete(tenant: string, eventId: string, completion: EventCompletion): Promise<MeetingCompleted> {
    return this.ask({ tenant }, eventId, { type: 'complete', completion });
  }

  /** Join by meeting code: the JoinResponse, or `waiting` with a position when a host must admit first. */
  async joinByCode(p: Principal, meetingCode: string): Promise<Record<string, unknown>> {
    const eventId = await this.deps.eventIdForCode(p.tenant, meetingCode);
    return this.ask(p, eventId, { type: 'join', caller: callerOfPrincipal(p), code: meetingCode.toUpperCase() });
  }

  waiting(p: Principal, eventId: string): Promise<WaitingRoomView> {
    return this.ask(p, eventId, { type: 'waitingRoom', caller: callerOfPrincipal(p) });
  }

  /** `held`: admitted while a consented recording runs, held until they agree to it (decision 910). */
  admit(p: Principal, req: AdmitRequest): Promise<WaitingRoomView & { admitted: string[]; held?: string[] }> {
    const msg: MeetingMsg = { type: 'admit', caller: callerOfPrincipal(p), userId: req.userId, all: req.all };
    return this.ask(p, req.eventId, msg, dedupe(p, 'admit', req.requestId));
  }

  deny(p: Principal, req: DenyRequest): Promise<WaitingRoomView & { denied: string[] }> {
    const msg: MeetingMsg = {
      type: 'deny',
      caller: callerOfPrincipal(p),
      userId: req.userId,
      all: req.all,
      message: req.message,
    };
    return this.ask(p, req.eventId, msg, dedupe(p, 'deny', req.requestId));
  }

  /**
   * startrecording / stoprecording (REST): the same turn as the hub's startRecording / stopRecording, so
   * the members hear it, the meeting shows it and the consent policy is asked (decision 1010). `onBehalfOf`:
   * an administrator attributing the recording to a participant; the audit trail names both. The
   * attributed caller keeps the administrator's name and permissions: a recording turn adds no member.
   */
  recording(
    p: Principal,
    eventId: string,
    action: 'start' | 'stop',
    opts: { onBehalfOf?: string; ip?: string; requestId?: string; reason?: string } = {},
  ): Promise<MeetingDetails> {
    const own = callerOfPrincipal(p);
    const caller: Caller =
      opts.onBehalfOf && opts.onBehalfOf !== p.userId
        ? { ...own, userId: opts.onBehalfOf, actorUserId: p.actorUserId ?? p.userId }
        : own;
    const via = { via: 'rest' as const, ...(opts.ip ? { ip: opts.ip } : {}) };
    const msg: MeetingMsg =
      action === 'start'
        ? {
            type: 'startRecording',
            caller,
            ...via,
            ...(opts.requestId ? { requestId: opts.requestId } : {}),
            ...(opts.reason ? { reason: opts.reason } : {}),
          }
        : { type: 'stopRecording', caller, ...via };
    const name = action === 'start' ? 'startRecording' : 'stopRecording';
    return this.ask(p, eventId, msg, dedupe(p, name, opts.requestId));
  }

  /**
   * A host control (remove, end, lock, unlock, host changes, mute, host access answer) as a turn of the
   * event's meeting actor, de-duplicated by the caller's request id like the hub's (decision 900).
   */
  control(p: Principal, eventId: string, cmd: ControlCommand, requestId?: string): Promise<ControlResult> {
    const msg = { ...cmd, caller: callerOfPrincipal(p) } as MeetingControlMsg;
    return this.ask(p, eventId, msg, dedupe(p, cmd.type, requestId));
  }
}

/** A host control's message without its caller (the transport adds the verified caller). */
export type ControlCommand = MeetingControlMsg extends infer M
  ? M extends MeetingControlMsg
    ? Omit<M, 'caller'>
    : never
  : never;

/** Answers a recording consent request (decision 910), as the hub's consentToRecording does. */
export function consentToRecording(
  rooms: Pick<MeetingRooms, 'send'>,
  p: Principal,
  req: ConsentAnswerRequest,
): Promise<ConsentAnswerResult> {
  const msg: MeetingMsg = {
    type: 'consentToRecording',
    caller: callerOfPrincipal(p),
    requestId: req.requestId,
    consent: req.consent,
  };
  return rooms.send(p, req.eventId, msg);
}

/** Same de-duplication id as the hub's for the same request id, so a control retried on another transport applies once. */
export function dedupe(p: { userId: string }, name: string, requestId?: string): AskOptions | undefined {
  return requestId ? { dedupeId: `${name}:${p.userId}:${requestId}` } : undefined;
}
