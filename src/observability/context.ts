import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** Per-request (or per-message) context carried through async calls for logs and problem documents. */
export interface RequestContext {
  correlationId: string;
  tenant?: string;
  userId?: string;
  component?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithContext<T>(ctx: Partial<RequestContext>, fn: () => T): T {
  return storage.run({ correlationId: ctx.correlationId ?? randomUUID(), ...ctx }, fn);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

/** Adds fields to the running context (e.g. the tenant once resolved). */
export function enrichContext(fields: Partial<RequestContext>): void {
  const ctx = storage.getStore();
  if (ctx) Object.assign(ctx, fields);
}
