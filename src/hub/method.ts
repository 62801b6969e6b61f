import type { z } from 'zod';
import { AppError, fromZod } from '../core/errors.js';
import { permissionFor, satisfies, type OperationId } from '../auth/permission-table.js';
import type { Caller } from '../actors/common.schema.js';
import { fail, ok } from './ack.js';
import type { AckResult, HubMethodName } from './hub.events.js';
import type { HubContext, HubSocket } from './hub.types.js';
import type { SocketRateLimit } from './socket-rate-limit.js';

/** One client method: its name, permission-table id, argument schema (a tuple) and the one call it makes. */
export interface HubMethod<A extends unknown[] = unknown[]> {
  name: HubMethodName;
  op: OperationId;
  args: z.ZodType<A>;
  run(ctx: HubContext, socket: HubSocket, args: A): Promise<unknown>;
}

/** Declares a method with its argument types inferred from the schema. */
export function method<S extends z.ZodType<unknown[]>>(def: { name: HubMethodName; op: OperationId; args: S; run(ctx: HubContext, socket: HubSocket, args: z.infer<S>): Promise<unknown> }): HubMethod {
  return def as unknown as HubMethod;
}

/** The verified principal of a socket in the shape actor messages carry. */
export function callerOf(socket: HubSocket): Caller {
  const p = socket.data.principal;
  return { userId: p.userId, username: p.username, role: p.role, permissions: [...p.permissions], scheme: p.scheme, ...(p.sessionId ? { sessionId: p.sessionId } : {}) };
}

/**
 * Binds a method to a socket: rate limit -> permission -> argument validation -> run -> ack.
 * Whatever the client sends (no ack callback, wrong arity, garbage), the process never throws.
 */
export function bind(ctx: HubContext, socket: HubSocket, m: HubMethod, limit: SocketRateLimit): void {
  const required = permissionFor(m.op);
  const calls = ctx.metrics.counter('hub_method_calls_total', 'Hub method calls by method and outcome (ok or error code)', ['method', 'outcome']);
  const duration = ctx.metrics.histogram('hub_method_duration_seconds', 'Hub method latency, from receipt to ack', ['method'], [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
  const listener = async (...raw: unknown[]): Promise<void> => {
    const ack = typeof raw.at(-1) === 'function' ? (raw.pop() as (r: AckResult) => void) : undefined;
    const t0 = performance.now();
    let result: AckResult;
    try {
      limit.take();
      if (!satisfies(required, socket.data.principal.permissions)) throw new AppError('permission_denied', `${m.name} requires the '${required}' permission`);
      const parsed = m.args.safeParse(raw);
      if (!parsed.success) throw fromZod(parsed.error, 'args');
      result = ok(await m.run(ctx, socket, parsed.data));
    } catch (e) {
      result = fail(e, ctx.logger, m.name);
    }
    ack?.(result);
    try {
      duration.observe({ method: m.name }, (performance.now() - t0) / 1000);
      calls.inc({ method: m.name, outcome: result.ok ? 'ok' : result.error.code });
    } catch (err) {
      ctx.logger.warn({ component: 'hub', err: (err as Error).message }, 'hub metrics failed');
    }
  };
  socket.on(m.name, listener as never);
}
