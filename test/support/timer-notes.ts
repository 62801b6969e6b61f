/** A timer or interval as Node makes it (the fields read to say whether, and what, it still waits for). */
interface TimerHandle {
  hasRef(): boolean;
  _destroyed?: boolean;
  _idleTimeout?: number;
  _onTimeout?: unknown;
}

/**
 * Notes every timer and interval made through the globals (the product's modules and the libraries they
 * load call them) until `stop()`; `pending()` names each one still armed and referenced (one that would
 * keep the process alive) by its delay and what it would run. For tests that a stop leaves nothing armed.
 */
export function timerNotes(): { stop(): void; pending(): string[]; settled(withinMs: number): Promise<string[]> } {
  const g = globalThis as unknown as Record<'setTimeout' | 'setInterval', (...a: unknown[]) => TimerHandle>;
  const real = { setTimeout: g.setTimeout, setInterval: g.setInterval };
  const made: TimerHandle[] = [];
  for (const fn of ['setTimeout', 'setInterval'] as const)
    g[fn] = Object.assign((...a: unknown[]) => {
      const t = real[fn](...a);
      made.push(t);
      return t;
    }, real[fn]);
  const pending = () =>
    made
      .filter((t) => !t._destroyed && t.hasRef())
      .map((t) => `${t._idleTimeout} ms ${String(t._onTimeout).replace(/\s+/g, ' ').slice(0, 100)}`);
  return {
    stop: () => Object.assign(g, real),
    pending,
    /** What is still pending after closes under way had up to `withinMs` to finish. */
    async settled(withinMs: number) {
      for (const until = Date.now() + withinMs; pending().length && Date.now() < until;)
        await new Promise((r) => real.setTimeout(r, 50));
      return pending();
    },
  };
}
