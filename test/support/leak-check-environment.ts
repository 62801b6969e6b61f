/**
 * Jest's node environment plus a check that a test file leaves nothing running behind it. While the
 * file runs, an async hook notes every socket, server, child process, timer and immediate it creates
 * and forgets those destroyed; after the file's teardown (and a short settle for closes already under
 * way) whatever of them is still alive AND would keep the process running (`hasRef()`) is a leak. The
 * file then fails as "failed outside its tests" (scripts/test.mjs counts those), naming what it left.
 * Such leaks are what made jest print "A worker process has failed to exit gracefully".
 * LEAK_CHECK=report prints instead of failing; LEAK_CHECK=off skips the check.
 */
import { createHook, type AsyncHook } from 'node:async_hooks';
import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';

const WATCHED = new Set(['TCPWRAP', 'TCPSERVERWRAP', 'PIPEWRAP', 'PIPESERVERWRAP', 'PROCESSWRAP', 'TLSWRAP', 'UDPWRAP', 'Timeout', 'Immediate']);
const SETTLE_MS = Number(process.env.LEAK_CHECK_SETTLE_MS ?? 5000);
const STACKS = process.env.LEAK_CHECK_STACKS === '1';

function projectFrames(stack: string): string {
  const frames = stack.split('\n').slice(1).map((l) => l.trim()).filter((l) => !l.includes('leak-check-environment') && !l.includes('node:internal') && !l.includes('(node:'));
  const own = frames.filter((l) => /\/(src|test|bench)\//.test(l) && !l.includes('/node_modules/'));
  // A library's timer made from a callback has no project frame: its own frames say whose it is.
  return (own.length ? own : frames).slice(0, 3).join(' < ');
}

interface Tracked {
  type: string;
  resource: { hasRef?: () => boolean };
  stack: string;
}

/**
 * Whether the resource would keep the process running: referenced, and for a socket handle, its socket
 * not yet destroyed (a TLS handle's destroy hook may come only with garbage collection).
 */
function holdsProcess(t: Tracked): boolean {
  if (t.resource.hasRef && !t.resource.hasRef()) return false;
  const owner = Object.getOwnPropertySymbols(t.resource).find((s) => s.description === 'owner_symbol');
  const socket = owner ? (t.resource as Record<symbol, { destroyed?: boolean } | undefined>)[owner] : undefined;
  // The worker's own standard streams, made on first use by whatever printed: the process's, not the file's.
  if (socket && (socket === process.stdout || socket === process.stderr)) return false;
  return !socket?.destroyed;
}

export default class LeakCheckEnvironment extends NodeEnvironment {
  private readonly alive = new Map<number, Tracked>();
  private hook: AsyncHook | undefined;
  private readonly file: string;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.file = context.testPath.replace(`${process.cwd()}/`, '');
  }

  override async setup(): Promise<void> {
    await super.setup();
    if (process.env.LEAK_CHECK === 'off') return;
    this.hook = createHook({
      init: (id, type, _trigger, resource) => {
        if (!WATCHED.has(type)) return;
        // Where it was made, for the report: the first project frames. Timers are many, so their stacks are
        // taken only with LEAK_CHECK_STACKS=1 (re-run the file that leaked with it to see where).
        const timer = type === 'Timeout' || type === 'Immediate';
        const stack = timer && !STACKS ? '' : projectFrames(new Error().stack ?? '');
        this.alive.set(id, { type, resource: resource as Tracked['resource'], stack });
      },
      destroy: (id) => void this.alive.delete(id),
    }).enable();
  }

  override async teardown(): Promise<void> {
    await super.teardown();
    if (!this.hook) return;
    const left = () => [...this.alive.values()].filter(holdsProcess);
    const until = Date.now() + SETTLE_MS;
    while (left().length && Date.now() < until) await new Promise((r) => setTimeout(r, 50).unref());
    this.hook.disable();
    const leaks = left();
    this.alive.clear();
    if (!leaks.length) return;
    const byType = new Map<string, Tracked[]>();
    for (const t of leaks) byType.set(t.type, [...(byType.get(t.type) ?? []), t]);
    const message = `${this.file} left running: ${[...byType].map(([type, ts]) => `${ts.length} ${type} (made at ${ts[0]!.stack || 'see LEAK_CHECK_STACKS=1'})`).join('; ')}. Close every server, socket, client, timer and child process a test starts.`;
    if (process.env.LEAK_CHECK === 'report') process.stderr.write(`[leak-check] ${message}\n`);
    else throw new Error(message);
  }
}
