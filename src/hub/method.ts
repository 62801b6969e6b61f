import type { z } from 'zod';
import { AppError, fromZod } from '../kernel/errors.js';
import { refuseControlChars } from '../kernel/text-input.js';
import { satisfies, type Requirement } from '../kernel/requirement.js';
import { type Caller, callerOfPrincipal } from '../kernel/caller.js';
import { auditEntry } from '../core/audit/audit-by.js';
import { fail, ok } from './ack.js';
import type { Ack, AckResult, ClientToServerEvents, HubMethodName } from './hub.events.js';
import type { HubContext, HubSocket } from './hub.types.js';
import type { SocketRateLimit } from './socket-rate-limit.js';
import { CounterChild, HistogramChild, type Metrics } from '../observability/metrics.js';
import { SpanKind, startSpan, tracingOn, UNTRACED, type TraceCarrier } from '../observability/tracing.js';

/**
 * One client method: its name, what the caller needs (docs/permissions.md lists it as `hub.<name>`),
 * argument schema (a tuple) and the one call it makes.
 */
export interface HubMethod<A extends unknown[] = unknown[]> {
  name: HubMethodName;
  requires: Requirement;
  /** The rule beyond the permission, in words (host of the meeting, ownership...), for docs/permissions.md. */
  note?: string;
  args: z.ZodType<A>;
  run(ctx: HubContext, socket: HubSocket, args: A): Promise<unknown>;
}

/** A method's arguments as the client sends them (ClientToServerEvents, without the acknowledgement). */
export type HubArgs<N extends HubMethodName> =
  Parameters<ClientToServerEvents[N]> extends [...infer A, Ack<never>] ? A : never;

/** `true` when A and B are the same type (each assignable to the other), else `false`. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * Compiles only when the schema's parsed tuple is exactly the method's arguments in ClientToServerEvents
 * (the event map the clients are typed from); otherwise the `args` property asks for the declared tuple.
 */
export type MatchesEvent<N extends HubMethodName, S extends z.ZodType<unknown[]>> =
  Same<z.infer<S>, HubArgs<N>> extends true ? unknown : { 'schema differs from ClientToServerEvents': HubArgs<N> };

interface MethodDef<N extends HubMethodName, S extends z.ZodType<unknown[]>> {
  name: N;
  requires: Requirement;
  note?: string;
  args: S;
  run(ctx: HubContext, socket: HubSocket, args: z.infer<S>): Promise<unknown>;
}

/**
 * Declares a method with its argument types inferred from the schema. The compiler holds the schema to
 * ClientToServerEvents: a schema whose parsed tuple is not exactly the method's declared arguments does
 * not compile (src/hub/method.test.ts shows both cases).
 */
export function method<N extends HubMethodName, S extends z.ZodType<unknown[]>>(
  def: MethodDef<N, S> & { args: MatchesEvent<N, S> },
): HubMethod {
  return def as unknown as HubMethod;
}

/**
 * The same for a helper that declares several methods (a name union): the helper's own parameters carry
 * the MatchesEvent check for each call site, which a generic body cannot evaluate.
 */
export function methodOfHelper<N extends HubMethodName, S extends z.ZodType<unknown[]>>(
  def: MethodDef<N, S>,
): HubMethod {
  return def as unknown as HubMethod;
}

/** The verified principal of a socket in the shape actor messages carry. */
export function callerOf(socket: HubSocket): Caller {
  return callerOfPrincipal(socket.data.principal);
}

/** The client methods of a node, looked up by event name, with what every call of each needs. */
export type MethodTable = ReadonlyMap<
  string,
  { m: HubMethod; required: Requirement; observe(seconds: number, outcome: string): void }
>;

/**
 * Built once per node: per-socket state is then one dispatcher, not a listener per method, and each
 * method keeps its metric children (label lookups per call showed in B1's profile).
 */
export function methodTable(methods: readonly HubMethod[], metrics: Metrics): MethodTable {
  const calls = metrics.counter('hub_method_calls_total', 'Hub method calls by method and outcome (ok or error code)', [
    'method',
    'outcome',
  ]);
  const duration = metrics.histogram(
    'hub_method_duration_seconds',
    'Hub method latency, from receipt to ack',
    ['method'],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  return new Map(
    methods.map((m) => {
      const timing = new HistogramChild(duration, { method: m.name });
      const outcomes = new Map<string, CounterChild>();
      const observe = (seconds: number, outcome: string) => {
        timing.observe(seconds);
        let child = outcomes.get(outcome);
        if (!child) outcomes.set(outcome, (child = new CounterChild(calls, { method: m.name, outcome })));
        child.inc();
      };
      return [m.name, { m, required: m.requires, observe }];
    }),
  );
}

/** What every socket of a node runs for each event it receives (methodDispatcher). */
export type MethodDispatcher = (this: HubSocket, event: unknown, ...raw: unknown[]) => Promise<void>;

/**
 * Serves a socket's client methods: rate limit -> permission -> argument validation -> run -> ack.
 * One `onAny` listener per socket dispatches by event name (unknown names are ignored, as events
 * without a listener are); whatever the client sends (no ack callback, wrong arity, garbage), the
 * process never throws. The listener is the node's one dispatcher: what is the socket's own (its rate
 * limit, whether its trace context counts) is on its data, not in a closure per socket.
 */
export function serveMethods(
  socket: HubSocket,
  dispatch: MethodDispatcher,
  limit: SocketRateLimit,
  /** Whether the socket's caller is a configured proxy address itself, so its calls' trace context counts. */
  traceTrusted = false,
): void {
  socket.data.callLimit = limit;
  socket.data.traceTrusted = traceTrusted;
  socket.onAny(dispatch);
}

/** The dispatcher of a node's sockets, made once per node: Socket.IO calls it with the socket as `this`. */
export function methodDispatcher(ctx: HubContext, table: MethodTable): MethodDispatcher {
  return async function (this: HubSocket, event: unknown, ...raw: unknown[]): Promise<void> {
    const entry = typeof event === 'string' ? table.get(event) : undefined;
    if (!entry) return;
    const socket = this;
    const { m, required, observe } = entry;
    const ack = typeof raw.at(-1) === 'function' ? (raw.pop() as (r: AckResult) => void) : undefined;
    const t0 = performance.now();
    const parent = traceArg(raw, socket.data.traceTrusted === true);
    // Tracing off: no span options per call (B1).
    const span = tracingOn()
      ? startSpan(`hub ${m.name}`, {
          kind: SpanKind.SERVER,
          parent,
          attributes: { 'rpc.system': 'socket.io', 'rpc.method': m.name, tenant: socket.data.tenant },
        })
      : UNTRACED;
    let result: AckResult;
    try {
      if (!socket.data.callLimit) throw new AppError('internal', 'The connection is not served');
      socket.data.callLimit.take();
      if (m.name !== 'refreshToken') ctx.sessions.assertLive(socket);
      const p = socket.data.principal;
      if (p.actorUserId)
        await ctx.audit?.record(
          p.tenant,
          auditEntry(p, 'impersonation.request', { subjectId: p.userId, details: { via: 'hub', method: m.name } }),
        );
      if (!satisfies(required, socket.data.principal.permissions))
        throw new AppError('permission_denied', `${m.name} requires the '${required}' permission`);
      refuseControlChars(raw, 'args');
      const parsed = m.args.safeParse(raw);
      if (!parsed.success) throw fromZod(parsed.error, 'args');
      const args = parsed.data;
      result = ok(await (span === UNTRACED ? m.run(ctx, socket, args) : span.run(() => m.run(ctx, socket, args))));
    } catch (e) {
      result = span.run(() => fail(e, ctx.logger, m.name));
    }
    span.end(result.ok ? undefined : result.error);
    try {
      ack?.(result);
    } catch (err) {
      // A result that cannot be encoded: the client still gets a coded answer.
      ctx.logger.error({ component: 'hub', code: 'internal', method: m.name, err }, 'hub ack failed');
      try {
        ack?.({ ok: false, error: { code: 'internal', message: 'The result could not be sent' } });
      } catch {
        /* the socket is gone */
      }
    }
    try {
      observe((performance.now() - t0) / 1000, result.ok ? 'ok' : result.error.code);
    } catch (err) {
      ctx.logger.warn({ component: 'hub', err: (err as Error).message }, 'hub metrics failed');
    }
  };
}

/**
 * A hub call's trace context: a trailing argument before the ack of exactly `{ traceparent, tracestate? }`
 * (decision 840). It is taken off the arguments, so methods never see it; it is the call's parent only on
 * a socket whose caller is a configured proxy address itself (decision 1033). A call without one, or
 * from anyone else, starts a trace of its own, sampled by TRACING_SAMPLE_RATIO.
 */
function traceArg(raw: unknown[], trusted: boolean): TraceCarrier | undefined {
  const last = raw.at(-1);
  // Most calls carry none: no key list is made for a last argument without `traceparent`.
  if (!last || typeof last !== 'object' || Array.isArray(last) || !('traceparent' in last)) return undefined;
  const keys = Object.keys(last);
  if (!keys.includes('traceparent') || keys.some((k) => k !== 'traceparent' && k !== 'tracestate')) return undefined;
  raw.pop();
  return trusted ? (last as TraceCarrier) : undefined;
}
