import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { z } from 'zod';

export { SpanKind };
/** A captured trace context (opaque outside this module). */
export type TraceContext = Context;

/**
 * W3C trace context as it travels between processes: in an HTTP request's headers, a hub call's trailing
 * argument, an actor envelope, a job's options and a relayed push (docs/decisions/840).
 */
export const TraceCarrier = z.object({
  traceparent: z
    .string()
    .regex(/^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/)
    .optional(),
  tracestate: z.string().max(512).optional(),
});
export type TraceCarrier = z.infer<typeof TraceCarrier>;

/**
 * Whether this process exports traces. The OpenTelemetry API is process-global by design (one tracer
 * provider per process), so this is the one module-level switch; `startTracing` (tracing-setup.ts)
 * turns it on. While off, every helper below returns at once: no span, no context switch, no carrier.
 */
let on = false;

/** Called once by tracing-setup.ts after the provider, propagator and context manager are registered. */
export function markTracingOn(value = true): void {
  on = value;
}

export function tracingOn(): boolean {
  return on;
}

/** A started span (or nothing, while tracing is off), and how to run code inside it and end it. */
export interface Traced {
  readonly span?: Span;
  /** The trace id: the correlation id of everything done in this span. */
  readonly traceId?: string;
  /** Runs `fn` with this span as the active context (directly when tracing is off). */
  run<T>(fn: () => T): T;
  /** Ends the span, recording `err` (its stable code when it has one) as the failure. */
  end(err?: unknown): void;
}

const OFF: Traced = { run: (fn) => fn(), end: () => undefined };
/** What startSpan answers while tracing is off, for a caller that skips building its options. */
export const UNTRACED: Traced = OFF;

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The remote parent (a carrier that crossed a process boundary) or a context; default the active one. */
  parent?: TraceCarrier | Context;
  /** Start only when a parent exists (timer turns and unparented pushes would each make a new trace). */
  onlyWithParent?: boolean;
}

/** Starts a span when tracing is on; the returned handle is a no-op otherwise. */
export function startSpan(name: string, opts: SpanOptions = {}): Traced {
  if (!on) return OFF;
  const parent = parentContext(opts.parent);
  if (opts.onlyWithParent && !trace.getSpan(parent)) return OFF;
  const span = trace
    .getTracer('consult-service')
    .startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes }, parent);
  const ctx = trace.setSpan(parent, span);
  const traceId = span.spanContext().traceId;
  let ended = false;
  return {
    span,
    traceId,
    run: (fn) => context.with(ctx, fn),
    end(err) {
      if (ended) return;
      ended = true;
      if (err !== undefined) {
        const code = errorCode(err);
        span.setAttribute('error.type', code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: code });
      }
      span.end();
    },
  };
}

/** Runs `fn` in a new span that ends when `fn` settles (failures recorded); plain `fn()` while off. */
export async function inSpan<T>(name: string, opts: SpanOptions, fn: () => Promise<T>): Promise<T> {
  if (!on) return fn();
  const t = startSpan(name, opts);
  try {
    const value = await t.run(fn);
    t.end();
    return value;
  } catch (e) {
    t.end(e);
    throw e;
  }
}

/** The active trace context as a carrier to send along, or undefined while tracing is off or outside a span. */
export function injectTrace(): TraceCarrier | undefined {
  if (!on) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? (carrier as TraceCarrier) : undefined;
}

/** The active context, to hand to work that runs later in another async chain (an actor's mailbox). */
export function activeContext(): Context | undefined {
  return on && trace.getSpan(context.active()) ? context.active() : undefined;
}

/** Runs `fn` inside `ctx` (a context captured by activeContext); directly when there is none. */
export function runInContext<T>(ctx: Context | undefined, fn: () => T): T {
  return ctx ? context.with(ctx, fn) : fn();
}

/** The trace id of the active span, if any: what log lines carry as their correlation id. */
export function activeTraceId(): string | undefined {
  if (!on) return undefined;
  const sc = trace.getSpan(context.active())?.spanContext();
  return sc && trace.isSpanContextValid(sc) ? sc.traceId : undefined;
}

/** The trace id named by a `traceparent` value (used as correlation id while tracing is off). */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  const parsed = TraceCarrier.shape.traceparent.safeParse(traceparent);
  const id = parsed.success ? parsed.data?.split('-')[1] : undefined;
  return id && !/^0+$/.test(id) ? id : undefined;
}

function parentContext(parent: SpanOptions['parent']): Context {
  if (!parent) return context.active();
  if (isContext(parent)) return parent;
  const carrier = TraceCarrier.safeParse(parent);
  return carrier.success && carrier.data.traceparent ? propagation.extract(ROOT_CONTEXT, carrier.data) : ROOT_CONTEXT;
}

function isContext(v: TraceCarrier | Context): v is Context {
  return typeof (v as Context).getValue === 'function';
}

function errorCode(err: unknown): string {
  if (err && typeof err === 'object' && typeof (err as { code?: unknown }).code === 'string')
    return (err as { code: string }).code;
  return err instanceof Error ? err.name : 'error';
}
