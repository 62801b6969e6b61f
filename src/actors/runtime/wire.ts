// The envelopes between nodes, by the Redis lists or a direct link (src/actors/runtime/transport.ts).
import { z } from 'zod';
import { compactCaller, expandCaller, type Caller } from '../../kernel/caller.js';
import { AppError, ERROR_CODES, type ErrorCode } from '../../kernel/errors.js';
import { TraceCarrier } from '../../observability/tracing.js';
import { ActorAddressSchema } from './placement.js';

export const RequestSchema = z.object({
  t: z.literal('req'),
  rid: z.string().min(1),
  from: z.string().min(1),
  to: ActorAddressSchema,
  msg: z.unknown(),
  dedupeId: z.string().min(1).max(200),
  attempt: z.number().int().positive(),
  /** Asked by a running turn (served by a shard's holder during its handoff). */
  nested: z.boolean().optional(),
  /** The asker's deadline (its Date.now()); absent from senders before decision 1140. */
  deadline: z.number().finite().optional(),
  /** The asker's trace context (W3C), when tracing is on: the owner's turn continues that trace. */
  trace: TraceCarrier.optional(),
});
export const ReplySchema = z.object({
  t: z.literal('rep'),
  rid: z.string().min(1),
  ok: z.boolean(),
  value: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /**
   * The replying node's permission catalogue (decision 1156): the sender sends callers' permissions to it
   * as a mask while this matches its own. Absent from nodes before that decision.
   */
  pc: z.string().optional(),
});

export type RemoteRequest = z.infer<typeof RequestSchema>;
export type Reply = z.infer<typeof ReplySchema>;

/** Rebuilds a coded error that crossed the wire; unknown codes become `internal`. */
export function errorFromWire(e: { code: string; message: string }): AppError {
  const code = (e.code in ERROR_CODES ? e.code : 'internal') as ErrorCode;
  return new AppError(code, e.message);
}

/** A message's caller, where it has one (every actor message that acts for someone: `msg.caller`). */
function callerOf(msg: unknown): Record<string, unknown> | undefined {
  if (typeof msg !== 'object' || msg === null) return undefined;
  const c = (msg as { caller?: unknown }).caller;
  return typeof c === 'object' && c !== null && !Array.isArray(c) ? (c as Record<string, unknown>) : undefined;
}

/** The request with its caller's permissions as a mask; undefined when there is nothing to shorten. */
export function withCompactCaller(env: RemoteRequest): RemoteRequest | undefined {
  const caller = callerOf(env.msg);
  if (!caller || !Array.isArray(caller.permissions) || caller.permissions.length === 0) return undefined;
  const wire = compactCaller(caller as unknown as Caller);
  if (wire === (caller as unknown)) return undefined;
  return { ...env, msg: { ...(env.msg as object), caller: wire } };
}

/** The request with its caller's mask read back into names; undefined when the mask is not this node's. */
export function withExpandedCaller(req: RemoteRequest): RemoteRequest | undefined {
  const caller = callerOf(req.msg);
  if (!caller || !('pm' in caller)) return req;
  const expandedCaller = expandCaller(caller);
  if (!expandedCaller) return undefined;
  return { ...req, msg: { ...(req.msg as object), caller: expandedCaller } };
}

export function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
