import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { benchRoot, projectRoot } from './paths.js';
import { compiledPath, ensureCompiled, type Runtime } from './compiled.js';
import { benchNodeBinary } from './node-lines.js';

export interface HostProcess {
  pid: number;
  info: Record<string, any>;
  call<T = any>(name: string, args?: unknown): Promise<T>;
  /** Memory after a full GC. */
  mem(): Promise<NodeJS.MemoryUsage>;
  peakReset(): Promise<number>;
  peak(): Promise<{ peakRss: number; rss: number }>;
  stop(): Promise<void>;
  /** Sends a signal and (for SIGKILL) waits for the exit. */
  signal(sig: NodeJS.Signals): Promise<void>;
  exited: Promise<number | null>;
  /** How the host process runs (compiled.ts), and what it was started with. */
  runtime: HostRuntime;
}

/** What a host reports of its own process: its flags and the file it runs. */
export interface HostRuntime {
  runtime: Runtime;
  execArgv: string[];
  hostUrl: string;
  /** Whether a TypeScript loader hook is in the process (tsx's `--import`/`--loader`, or NODE_OPTIONS). */
  loader: boolean;
}

export interface HostOptions {
  env?: Record<string, string>;
  /** Raises the open-file limit inside the child (`ulimit -n`), for many connections. */
  nofile?: number;
  /** Directory for a V8 CPU profile written at exit (`--cpu-prof`). */
  cpuProfDir?: string;
  /** Node.js flags before the host's script (a product node's: productNodeFlags()). */
  nodeFlags?: string[];
  logFile: string;
  startTimeoutMs?: number;
  /**
   * 'compiled': the host and `module` run as JavaScript from bench/.build (src/ from dist/) with plain
   * node; 'tsx' (the default): their TypeScript sources through tsx. compiled.ts, decision 980.
   */
  runtime?: Runtime;
}

/**
 * Spawns the host (bench/harness/host.ts, or its compiled form) with `module` (relative to bench/)
 * and resolves once its start() returned. A compiled host that reports a TypeScript loader in its
 * process is refused: the run would measure the loader while its header says compiled.
 */
export async function spawnHost(module: string, params: unknown, opts: HostOptions): Promise<HostProcess> {
  const runtime = opts.runtime ?? 'tsx';
  const nodeArgs = runtime === 'compiled' ? ['--expose-gc'] : ['--expose-gc', '--import', 'tsx'];
  nodeArgs.push(...(opts.nodeFlags ?? []));
  if (opts.cpuProfDir) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`);
  let modulePath = path.join(benchRoot, module);
  if (runtime === 'compiled') {
    await ensureCompiled();
    nodeArgs.push(compiledPath('bench/harness/host.ts'));
    modulePath = compiledPath(path.join('bench', module));
  } else nodeArgs.push(path.join(benchRoot, 'harness', 'host.ts'));
  const proc = spawnNode(nodeArgs, opts);
  const client = ipcClient(proc);
  const timeout = opts.startTimeoutMs ?? 60_000;
  const info = await Promise.race([
    client.request({ cmd: 'start', module: modulePath, params }),
    client.exited.then((code) => {
      throw new Error(`${module} exited with ${code} while starting (log: ${opts.logFile})`);
    }),
    new Promise<never>((_, rej) =>
      setTimeout(
        () => rej(new Error(`${module} did not start within ${timeout} ms (log: ${opts.logFile})`)),
        timeout,
      ).unref(),
    ),
  ]).catch((e) => {
    proc.kill('SIGKILL');
    throw e;
  });
  const reported = (await client.request({ cmd: 'process' })) as Omit<HostRuntime, 'runtime'>;
  if (runtime === 'compiled' && (reported.loader || !reported.hostUrl.endsWith('.js'))) {
    proc.kill('SIGKILL');
    throw new Error(`${module} was to run compiled but its process has a loader: ${JSON.stringify(reported)}`);
  }
  return {
    runtime: { runtime, ...reported },
    pid: proc.pid!,
    info: info as Record<string, any>,
    exited: client.exited,
    call: (name, args) => client.request({ cmd: 'call', name, args }) as Promise<any>,
    mem: () => client.request({ cmd: 'mem' }) as Promise<NodeJS.MemoryUsage>,
    peakReset: async () => ((await client.request({ cmd: 'peak-reset' })) as { rss: number }).rss,
    peak: () => client.request({ cmd: 'peak' }) as Promise<{ peakRss: number; rss: number }>,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const killer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
      await client.request({ cmd: 'stop' }).catch(() => undefined);
      await client.exited;
      clearTimeout(killer);
    },
    async signal(sig) {
      proc.kill(sig);
      if (sig === 'SIGKILL') await client.exited;
    },
  };
}

/** Spawns node (the release measured, node-lines.ts; through `sh -c ulimit` when a higher fd limit is wanted) with IPC, logging to a file. */
export function spawnNode(
  nodeArgs: string[],
  opts: { env?: Record<string, string>; nofile?: number; logFile: string },
): ChildProcess {
  mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = openSync(opts.logFile, 'a');
  const env = { ...process.env, NODE_OPTIONS: '', ...opts.env };
  const stdio: ['ignore', number, number, 'ipc'] = ['ignore', out, out, 'ipc'];
  if (opts.nofile) {
    const script = `ulimit -n ${opts.nofile} 2>/dev/null || ulimit -n $(ulimit -Hn); exec "$0" "$@"`;
    return spawn('sh', ['-c', script, benchNodeBinary(), ...nodeArgs], { cwd: projectRoot, env, stdio });
  }
  return spawn(benchNodeBinary(), nodeArgs, { cwd: projectRoot, env, stdio });
}

/** Request/response over a child's IPC channel, plus its exit. */
export function ipcClient(proc: ChildProcess) {
  let next = 0;
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      for (const p of pending.values()) p.reject(new Error(`process ${proc.pid} exited (${code})`));
      pending.clear();
      resolve(code);
    }),
  );
  proc.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.result);
    else p.reject(new Error(m.error));
  });
  return {
    exited,
    request(msg: Record<string, unknown>): Promise<unknown> {
      const id = ++next;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        proc.send({ id, ...msg }, (err) => {
          if (err) {
            pending.delete(id);
            reject(err);
          }
        });
      });
    },
  };
}
