/**
 * Jest's node environment plus a check that a test file leaves nothing running behind it: after the
 * file's teardown (and up to a settle time for closes under way), every timer, interval or immediate
 * the file's code made (through the environment's own timer functions and `node:timers/promises`, which
 * the file and the libraries it loads use) that is still pending and referenced, every worker thread it
 * started that is still running (referenced or not: an unreferenced thread does not hold the event loop,
 * but it lives, and is torn down, with the process), and any socket, server or child process beyond
 * those the worker had before the file (`process.getActiveResourcesInfo()`), is a leak. The file then
 * fails as "failed outside its tests" (scripts/test.mjs counts those), naming what it left. Such leaks
 * are what made jest print "A worker process has failed to exit gracefully".
 *
 * LEAK_CHECK=report prints instead of failing; LEAK_CHECK=off skips the check. LEAK_CHECK_STACKS=1 also
 * says where each leaked resource was made, through an async hook; that hook slows promise-heavy code
 * about tenfold, so it is only for re-running a file that leaked.
 */
import { createHook, type AsyncHook } from 'node:async_hooks';
import { writeSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';
import type { Worker } from 'node:worker_threads';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';

const SETTLE_MS = Number(process.env.LEAK_CHECK_SETTLE_MS ?? 5000);
/** A worker whose event loop ends later than this after jest asked it to end says so (see exitReport). */
const EXIT_LATE_MS = Number(process.env.LEAK_CHECK_EXIT_LATE_MS ?? 250);
/** ... or that ends holding more memory than this (resident set, MB): ending it takes the OS a while. */
const EXIT_RSS_MB = Number(process.env.LEAK_CHECK_EXIT_RSS_MB ?? 1536);
const STACKS = process.env.LEAK_CHECK_STACKS === '1';
/** Async-hook types and the names getActiveResourcesInfo() reports for them. */
const HOOK_TYPES: Record<string, string> = {
  TCPWRAP: 'TCPSocketWrap',
  TCPSERVERWRAP: 'TCPServerWrap',
  PIPEWRAP: 'PipeWrap',
  PIPESERVERWRAP: 'PipeServerWrap',
  PROCESSWRAP: 'ProcessWrap',
  TLSWRAP: 'TLSWrap',
  UDPWRAP: 'UDPWrap',
  Timeout: 'Timeout',
  Immediate: 'Immediate',
};

/** Timers are tracked one by one (a count would let a timer jest clears hide one the file left). */
const TIMER_TYPES = new Set(['Timeout', 'Immediate']);

/**
 * What the worker holds, by type, less its own standard streams: jest's ESM loader makes
 * `process.stdin` whenever a file imports `node:process` (it reads every export of the core module),
 * and that stream is the worker's, not something the file left open. A standard stream something
 * reads from counts: a reader left on stdin keeps the worker alive.
 */
function countByType(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo())
    if (!TIMER_TYPES.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  const handles = (
    process as unknown as {
      _getActiveHandles(): {
        _handle?: { fd?: number; reading?: boolean };
        readableFlowing?: boolean | null;
        constructor?: { name?: string };
      }[];
    }
  )._getActiveHandles();
  for (const h of handles) {
    const fd = h._handle?.fd;
    if (fd === undefined || fd < 0 || fd > 2 || h._handle?.reading || h.readableFlowing) continue;
    for (const type of ['PipeWrap', 'TTYWrap']) {
      const n = counts.get(type) ?? 0;
      if (n > 0) {
        counts.set(type, n - 1);
        break;
      }
    }
  }
  return counts;
}

const coreRequire = createRequire(`${process.cwd()}/`);

/** The `timers` core module's own exports, which libraries call instead of the globals (engine.io does). */
const timersModule = coreRequire('node:timers') as Record<string, (...args: unknown[]) => unknown>;

/**
 * `node:timers/promises`: its timers are made inside Node, without calling the functions above, so its
 * own exports are noted too (src/vcs/embedded.adapter.ts and src/data/migrations/migration-lock.ts sleep
 * with them).
 */
const timersPromises = coreRequire('node:timers/promises') as Record<string, (...args: unknown[]) => unknown> & {
  scheduler: { wait(delay: number, options?: unknown): Promise<void> };
};

/** `node:worker_threads`, whose `Worker` the file's threads are made with (the file's imports read it at link time). */
const workerThreads = coreRequire('node:worker_threads') as { Worker: typeof Worker };

interface TimerLike {
  hasRef(): boolean;
  _destroyed?: boolean;
}

/**
 * What keeps a worker alive once jest has asked it to end. Jest ends a worker by removing its message
 * listener and letting the event loop drain, and kills it 500 ms later ("A worker process has failed to
 * exit gracefully"); something made after a file's check (a reconnect, a close that reopens) escapes
 * that check. When the worker is still alive 200 ms after jest's request, this says so on stderr, naming
 * the last file and each socket (with its file descriptor and whether something reads it), server, child
 * process and pending timer with the file that made it. State lives on `process`, which every load of
 * this module in the worker shares.
 */
interface IdleState {
  running: number;
  lastFile: string;
  endAskedAt: number;
  reported: boolean;
  timers: Map<TimerLike, string>;
  /** Worker threads a file started that have not ended, with the file and what each runs. */
  threads: Map<Worker, string>;
}
const shared = process as unknown as { __leakCheckIdle?: IdleState };
const idle: IdleState = shared.__leakCheckIdle ?? {
  running: 0,
  lastFile: '',
  endAskedAt: 0,
  reported: false,
  timers: new Map(),
  threads: new Map(),
};

/** One line per handle that can keep the event loop alive, and per referenced timer a file made. */
function describeHeld(timers: Map<TimerLike, string>): string[] {
  const lines: string[] = [];
  const handles = (process as unknown as { _getActiveHandles(): Record<string, unknown>[] })._getActiveHandles();
  for (const h of handles) {
    const name = (h.constructor as { name?: string } | undefined)?.name ?? 'unknown';
    const handle = h._handle as { fd?: number; constructor?: { name?: string }; reading?: boolean } | undefined;
    if (name === 'Socket' || name === 'ReadStream' || name === 'WriteStream') {
      const where = h.remoteAddress
        ? `to ${String(h.remoteAddress)}:${String(h.remotePort)}`
        : `${handle?.constructor?.name ?? 'no handle'} fd ${String(handle?.fd)}`;
      const stream = h as unknown as { listenerCount(e: string): number; readableFlowing?: boolean | null };
      lines.push(
        `  ${name} ${where}: reading ${String(handle?.reading)}, flowing ${String(stream.readableFlowing)}, ${stream.listenerCount('data')} data listener(s)`,
      );
    } else if (name === 'Server') lines.push('  a listening server');
    else if (name === 'ChildProcess') lines.push(`  child process ${JSON.stringify(h.spawnargs)}`);
    else lines.push(`  ${name}`);
  }
  for (const [t, file] of timers)
    if (!t._destroyed && t.hasRef())
      lines.push(
        `  timer from ${file}: ${String((t as unknown as { _onTimeout?: unknown })._onTimeout).slice(0, 160)}`,
      );
  for (const what of idle.threads.values()) lines.push(`  worker thread from ${what}`);
  return lines;
}

/** What holds the worker, `ms` after jest asked it to end. */
function heldReport(ms: number): string {
  return [
    `[leak-check] worker ${process.pid} still alive ${ms} ms after jest asked it to end (last file ${idle.lastFile}); it holds ${process.getActiveResourcesInfo().join(', ')}`,
    ...describeHeld(idle.timers),
  ].join('\n');
}

/**
 * Said when a worker's event loop ended (nothing held it) but late, or holding much memory: jest gives a
 * worker 500 ms from its request to the process's end, and the operating system's teardown of a large
 * process counts in it (about 0.3-0.6 s for 1-2 GB on a loaded 2-core machine). A worker grows by tens
 * of MB per test file (each file loads the service anew in its own module context), so without
 * jest's workerIdleMemoryLimit (jest.config.js) the last workers of a whole run ended at several GB and
 * jest reported "failed to exit gracefully" with nothing left open. Written synchronously: it is the
 * process's last word.
 */
function exitReport(): string | undefined {
  const ms = Date.now() - idle.endAskedAt;
  const { rss, heapUsed } = process.memoryUsage();
  const mb = (n: number) => Math.round(n / 1048576);
  if (ms <= EXIT_LATE_MS && mb(rss) <= EXIT_RSS_MB) return undefined;
  // Threads still running are stopped and joined by the process's end, after this.
  const threads = [...idle.threads.values()].map((what) => `\n  worker thread from ${what}`).join('');
  return `[leak-check] worker ${process.pid} (last file ${idle.lastFile}): nothing held it, its event loop ended ${ms} ms after jest asked it to end, with ${mb(rss)} MB resident (heap ${mb(heapUsed)} MB); ending a process that large takes the system long enough for jest to call it a failed graceful exit${threads}`;
}

// Only in a jest worker (a child with an IPC channel): the report is about the worker's own exit.
if (!shared.__leakCheckIdle && process.env.LEAK_CHECK !== 'off' && typeof process.send === 'function') {
  shared.__leakCheckIdle = idle;
  // Jest asks a worker to end by removing its message listener: noted at that moment, since a worker
  // that nothing holds ends right after, before any timer of this module could look.
  process.on('removeListener', (event) => {
    if (event !== 'message' || process.listenerCount('message') !== 0 || idle.endAskedAt || idle.running) return;
    idle.endAskedAt = Date.now();
    // Still running when jest force-exits it: what holds it, then the exit jest asked for.
    process.once('SIGTERM', () => {
      if (!idle.reported) writeSync(2, `${heldReport(Date.now() - idle.endAskedAt)}\n`);
      idle.reported = true;
      process.exit(143);
    });
  });
  process.once('exit', () => {
    const line = idle.endAskedAt && !idle.reported ? exitReport() : undefined;
    if (line) writeSync(2, `${line}\n`);
  });
  const timer = timersModule.setInterval!(() => {
    if (idle.running || idle.reported || !idle.endAskedAt || Date.now() - idle.endAskedAt < 200) return;
    idle.reported = true;
    process.stderr.write(`${heldReport(200)}\n`);
  }, 50) as { unref(): void };
  timer.unref();
}

function projectFrames(stack: string): string {
  const frames = stack
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .filter((l) => !l.includes('leak-check-environment') && !l.includes('node:internal') && !l.includes('(node:'));
  const own = frames.filter((l) => /\/(src|test|bench)\//.test(l) && !l.includes('/node_modules/'));
  // A library's resource made from a callback has no project frame: its own frames say whose it is.
  return (own.length ? own : frames).slice(0, 3).join(' < ');
}

export default class LeakCheckEnvironment extends NodeEnvironment {
  private readonly file: string;
  private baseline: Map<string, number> | undefined;
  private hook: AsyncHook | undefined;
  /** With LEAK_CHECK_STACKS=1: where each resource still alive was made, by type. */
  private readonly made = new Map<number, { type: string; stack: string }>();
  /** Every timer and immediate the file made, with where (stacks only with LEAK_CHECK_STACKS=1). */
  private readonly timers = new Map<TimerLike, { type: string; stack: string }>();
  /** The `timers` module's own functions, put back after the check. */
  private readonly realTimers = new Map<string, (...args: unknown[]) => unknown>();
  /** Put `node:timers/promises`' and `node:worker_threads`' own functions back after the check. */
  private readonly restores: (() => void)[] = [];
  /** Every worker thread the file started that has not ended, with what it runs and where it was made. */
  private readonly threads = new Map<Worker, { what: string; stack: string }>();

  /** A test or hook of the file failed: its own errors tell more than the handles it then left open. */
  private failed = false;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.file = context.testPath.replace(`${process.cwd()}/`, '');
  }

  override async setup(): Promise<void> {
    idle.running++;
    await super.setup();
    if (process.env.LEAK_CHECK === 'off') return;
    // The worker's standard streams are made on first use, by whatever prints first: the process's, not the file's.
    void process.stdout;
    void process.stderr;
    this.baseline = countByType();
    // Both the file's globals and the `timers` module note each timer they make.
    const g = this.global as unknown as Record<string, (...args: unknown[]) => TimerLike>;
    const timers = this.timers;
    const file = this.file;
    const where = () => (STACKS ? projectFrames(new Error().stack ?? '') : '');
    // First, so the globals' promisified forms (`util.promisify(setTimeout)`), copied below, are these.
    this.notePromiseTimers(where);
    this.noteWorkerThreads(where);
    const noting = (real: (...args: unknown[]) => unknown, type: string) =>
      Object.assign(function (this: unknown, ...args: unknown[]) {
        const t = real.apply(this, args) as TimerLike;
        timers.set(t, { type, stack: where() });
        idle.timers.set(t, file);
        return t;
      }, real);
    for (const [fn, type] of [
      ['setTimeout', 'Timeout'],
      ['setInterval', 'Timeout'],
      ['setImmediate', 'Immediate'],
    ] as const) {
      g[fn] = noting(g[fn]!, type) as (...args: unknown[]) => TimerLike;
      this.realTimers.set(fn, timersModule[fn]!);
      timersModule[fn] = noting(timersModule[fn]!, type);
    }
    syncBuiltinESMExports();
    if (STACKS) {
      this.hook = createHook({
        init: (id, type) => {
          const name = HOOK_TYPES[type];
          if (name && !TIMER_TYPES.has(name))
            this.made.set(id, { type: name, stack: projectFrames(new Error().stack ?? '') });
        },
        destroy: (id) => void this.made.delete(id),
      }).enable();
    }
  }

  /**
   * `node:timers/promises`' timers as the check sees timers: each one a file awaits is pending (and, unless
   * made with `ref: false`, referenced) until its promise settles; an interval's until its iteration ends
   * or its signal aborts. Node makes them without the `timers` functions noted above, so they were not seen.
   */
  private notePromiseTimers(where: () => string): void {
    const { timers, file } = this;
    const note = (type: string, ms: unknown, name: string, options: unknown) => {
      const o = options as { ref?: boolean; signal?: AbortSignal } | undefined;
      if (o?.ref === false) return undefined;
      const t = { _destroyed: false, _idleTimeout: Number(ms ?? 1), _onTimeout: { name }, hasRef: () => true };
      timers.set(t, { type, stack: where() });
      idle.timers.set(t, file);
      o?.signal?.addEventListener('abort', () => void (t._destroyed = true), { once: true });
      return t;
    };
    const settled = <T>(p: Promise<T>, t: { _destroyed: boolean } | undefined): Promise<T> => {
      if (t)
        p.then(
          () => void (t._destroyed = true),
          () => void (t._destroyed = true),
        );
      return p;
    };
    const real = { ...timersPromises };
    const scheduler = timersPromises.scheduler;
    const realWait = scheduler.wait;
    const ownWait = Object.getOwnPropertyDescriptor(scheduler, 'wait');
    this.restores.push(() => {
      for (const fn of ['setTimeout', 'setImmediate', 'setInterval']) timersPromises[fn] = real[fn]!;
      if (ownWait) Object.defineProperty(scheduler, 'wait', ownWait);
      else delete (scheduler as { wait?: unknown }).wait;
    });
    timersPromises.setTimeout = function (this: unknown, ...a: unknown[]) {
      const t = note('Timeout', a[0], 'node:timers/promises setTimeout', a[2]);
      return settled(real.setTimeout!.apply(this, a) as Promise<unknown>, t);
    };
    timersPromises.setImmediate = function (this: unknown, ...a: unknown[]) {
      const t = note('Immediate', 0, 'node:timers/promises setImmediate', a[1]);
      return settled(real.setImmediate!.apply(this, a) as Promise<unknown>, t);
    };
    timersPromises.setInterval = async function* (this: unknown, ...a: unknown[]) {
      const t = note('Timeout', a[0], 'node:timers/promises setInterval', a[2]);
      try {
        return yield* real.setInterval!.apply(this, a) as AsyncGenerator<unknown>;
      } finally {
        if (t) t._destroyed = true;
      }
    };
    scheduler.wait = (delay: number, options?: unknown) => {
      const t = note('Timeout', delay, 'node:timers/promises scheduler.wait', options);
      return settled(realWait.call(scheduler, delay, options), t);
    };
  }

  /**
   * Notes each worker thread the file starts, through `node:worker_threads`' Worker (a stand-in that
   * makes the real one): a thread is the file's until it ends. An unreferenced thread (the QR renderer's)
   * is in no list of the event loop's handles, so nothing else would see it.
   */
  private noteWorkerThreads(where: () => string): void {
    const { threads, file } = this;
    const real = workerThreads.Worker;
    this.restores.push(() => void (workerThreads.Worker = real));
    workerThreads.Worker = new Proxy(real, {
      construct(target, args: ConstructorParameters<typeof Worker>, newTarget) {
        const w = Reflect.construct(target, args, newTarget) as Worker;
        const [script, options] = args;
        const what = options?.eval
          ? `eval ${String(script).trim().replace(/\s+/g, ' ').slice(0, 60)}`
          : String(script).replace(`file://${process.cwd()}/`, '').replace(`${process.cwd()}/`, '');
        threads.set(w, { what, stack: where() });
        idle.threads.set(w, `${file}: ${what}`);
        // 'exit' refs nothing (only a 'message' listener refs the thread's port).
        w.once('exit', () => {
          threads.delete(w);
          idle.threads.delete(w);
        });
        return w;
      },
    });
  }

  // A leak found at teardown fails the file as a whole, and jest then reports that error instead of
  // the file's test results: a failed test, which often leaves its clients open, looked like a leak.
  handleTestEvent(event: { name: string; test?: { errors: unknown[] } }): void {
    if ((event.name === 'test_done' && event.test?.errors.length) || event.name === 'hook_failure') this.failed = true;
  }

  override async teardown(): Promise<void> {
    try {
      await this.teardownChecked();
    } finally {
      idle.running--;
      for (const [t] of idle.timers) if (t._destroyed) idle.timers.delete(t);
      idle.lastFile = this.file;
    }
  }

  private async teardownChecked(): Promise<void> {
    await super.teardown();
    const baseline = this.baseline;
    if (!baseline) return;
    const pendingTimers = () => [...this.timers].filter(([t]) => !t._destroyed && t.hasRef());
    const extra = () => {
      const out = [...countByType()]
        .filter(([type, n]) => n > (baseline.get(type) ?? 0))
        .map(([type, n]) => [type, n - (baseline.get(type) ?? 0)] as const);
      const timers = new Map<string, number>();
      for (const [, m] of pendingTimers()) timers.set(m.type, (timers.get(m.type) ?? 0) + 1);
      if (this.threads.size) timers.set('Worker thread', this.threads.size);
      return [...out, ...timers];
    };
    const until = Date.now() + SETTLE_MS;
    while (extra().length && Date.now() < until) await new Promise((r) => setTimeout(r, 50).unref());
    this.hook?.disable();
    const leaks = extra();
    for (const [fn, real] of this.realTimers) timersModule[fn] = real;
    for (const restore of this.restores.splice(0)) restore();
    syncBuiltinESMExports();
    if (!leaks.length) return this.timers.clear();
    const where = (type: string) => {
      if (type === 'Worker thread') {
        const seen = new Map<string, number>();
        for (const { what, stack } of this.threads.values()) {
          const w = STACKS ? `${what}, made ${stack || 'at no frame'}` : what;
          seen.set(w, (seen.get(w) ?? 0) + 1);
        }
        return ` (${[...seen].map(([w, n]) => `${n}x ${w}`).join('; ')})`;
      }
      if (!STACKS && TIMER_TYPES.has(type)) {
        // Without stacks, what each timer would run and after how long (cheap, and enough to find most).
        const seen = new Map<string, number>();
        for (const [t, m] of pendingTimers()) {
          if (m.type !== type) continue;
          const x = t as unknown as { _idleTimeout?: number; _onTimeout?: { name?: string; toString(): string } };
          const fn = x._onTimeout;
          const what = `${x._idleTimeout ?? '?'} ms ${fn?.name || String(fn).replace(/\s+/g, ' ').slice(0, 80)}`;
          seen.set(what, (seen.get(what) ?? 0) + 1);
        }
        return seen.size ? ` (${[...seen].map(([w, n]) => `${n}x ${w}`).join('; ')})` : '';
      }
      if (!STACKS) return '';
      const made = TIMER_TYPES.has(type) ? pendingTimers().map(([, m]) => m) : [...this.made.values()];
      const stacks = made.filter((m) => m.type === type).map((m) => m.stack);
      return ` (made at ${stacks[stacks.length - 1] || 'no frame'})`;
    };
    const message = `${this.file} left running: ${leaks.map(([type, n]) => `${n} ${type}${where(type)}`).join('; ')}${STACKS ? '' : ' (LEAK_CHECK_STACKS=1 says where they were made)'}. Close every server, socket, client, timer, worker thread and child process a test starts.`;
    this.timers.clear();
    this.threads.clear();
    if (process.env.LEAK_CHECK === 'report') process.stderr.write(`[leak-check] ${message}\n`);
    // The file fails already: its failures are reported, and the leak beside them.
    else if (this.failed) process.stderr.write(`[leak-check] after failed tests, ${message}\n`);
    else throw new Error(message);
  }
}
