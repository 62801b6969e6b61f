/**
 * Helpers every load generator uses: parameters from argv (validated), a hard deadline so the
 * process always stops by itself, and reporting to the harness over IPC.
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';

export function params<S extends z.ZodType>(schema: S): z.infer<S> {
  // `@file` carries large parameter sets (hundreds of tokens exceed the kernel's argument limit).
  const arg = process.argv[2] ?? '{}';
  const parsed = schema.safeParse(JSON.parse(arg.startsWith('@') ? readFileSync(arg.slice(1), 'utf8') : arg));
  if (!parsed.success) {
    finish({ error: `bad parameters: ${parsed.error.message}` });
    throw new Error('bad parameters');
  }
  return parsed.data;
}

/** Sends an interim message (e.g. `ready`) to the harness. */
export function tell(type: string, body: Record<string, unknown> = {}): void {
  process.send?.({ type, ...body });
}

/** Sends the final result and exits once it is flushed. */
export function finish(body: Record<string, unknown>): void {
  const exit = () => process.exit(0);
  if (process.send) process.send({ type: 'result', ...body }, exit);
  else exit();
  setTimeout(exit, 2000).unref();
}

/** Exits with an error result if the generator is still running after `ms`. */
export function deadline(ms: number): void {
  setTimeout(() => finish({ error: `deadline of ${ms} ms reached` }), ms).unref();
  // The harness is gone (stopped or crashed): no one is left to report to, so do not linger until the deadline.
  process.once('disconnect', () => process.exit(1));
}

/** Resolves on the harness's next message of `type`. */
export function waitFor(type: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type === type) {
        process.off('message', on);
        resolve(m as Record<string, unknown>);
      }
    };
    process.on('message', on);
  });
}

export const now = (): number => performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
