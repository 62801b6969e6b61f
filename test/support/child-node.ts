import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { stop as stopEsbuild, transformSync } from 'esbuild';
import { NODE_FLAGS } from '../../scripts/node-flags.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface ChildNode {
  proc: ChildProcess;
  url: string;
  /** Base URL of the node's metrics listener. */
  metricsUrl: string;
  /** Hard kill (SIGKILL): no handoff, no cleanup; what a crashed node looks like. */
  kill(): Promise<void>;
  /** Graceful stop (SIGTERM) and wait for exit. */
  stop(): Promise<number | null>;
  /** Log lines (parsed JSON) the node printed so far. */
  logs: Record<string, unknown>[];
  /** What the node wrote to stderr so far (an uncaught exception's stack lands here), its inspector's notices left out. */
  stderr(): string;
  /** The V8 inspector's WebSocket URL, for a node started with `inspect` (test/support/inspector.ts). */
  inspectorUrl?: string;
  /** The next log line (parsed JSON) that satisfies `match`, printed after this call. */
  nextLog(match: (rec: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/** What a child node runs: by default src/main.ts through tsx with this process's node. */
export interface ChildNodeCommand {
  /** The node binary (another Node.js line than the one running the tests). */
  execPath?: string;
  /** Arguments to node, e.g. COMPILED_MAIN for the build in dist/. */
  args?: string[];
  /**
   * Runs the compiled service (dist/, which the caller builds first: scripts/build.mjs ensureBuilt) with
   * plain node and no TypeScript loader, the preloads the env asks for (turn recorder, loop monitor)
   * compiled too: a node then starts without transpiling anything, which on a loaded machine is most of
   * a tsx start. Ignored when `args` is given.
   */
  compiled?: boolean;
  /** Opens the V8 inspector on a free loopback port (`inspectorUrl`): a test reads the node's live heap. */
  inspect?: boolean;
}

/** What node writes to stderr when its inspector listens (not a finding of the node's). */
const INSPECTOR_NOTICE =
  /^(?:Debugger listening on (ws:\/\/\S+)|Debugger (?:attached|ending on|detached)\b.*|For help, see: .*|Waiting for the debugger to disconnect.*)\n/gm;

/** The compiled service (`npm run build`), run with plain node and its flags, as production runs it. */
export const COMPILED_MAIN = [...NODE_FLAGS, path.join(root, 'dist/main.js')];

/**
 * A test/support preload compiled to one plain ES module under .local/preloads (types stripped, no
 * bundling: such a preload imports only node: modules at run time). Written once per content; the
 * rename makes a concurrent writer's file appear whole.
 */
function compiledPreload(file: string): string {
  const source = readFileSync(path.join(root, file), 'utf8');
  const { code } = transformSync(source, { loader: 'ts', format: 'esm', target: 'node20', sourcefile: file });
  // esbuild runs its synchronous calls on a worker thread it keeps for the next one: end it, or it
  // outlives the test file (the leak check names it).
  void stopEsbuild();
  const dir = path.join(root, '.local/preloads');
  mkdirSync(dir, { recursive: true });
  const out = path.join(dir, `${path.basename(file, '.ts')}.mjs`);
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, code);
  renameSync(tmp, out);
  return out;
}

/**
 * Runs src/main.ts (or `command`; `compiled`: dist/main.js) as a separate process with the given environment (use testEnv() so it shares the
 * test's databases and Redis prefix) and resolves once it logged 'node started'. With TURN_RECORD_FILE
 * in `env` the node runs with the turn recorder preloaded (test/support/turn-recorder.ts).
 */
export function spawnChildNode(
  env: Record<string, string>,
  timeoutMs = 30_000,
  command: ChildNodeCommand = {},
): Promise<ChildNode> {
  const compiled = command.compiled === true && !command.args;
  const preloads = [...(env.TURN_RECORD_FILE ? ['test/support/turn-recorder.ts'] : [])].flatMap((f) => [
    '--import',
    compiled ? compiledPreload(f) : path.join(root, f),
  ]);
  const args = [
    ...(command.inspect ? ['--inspect=127.0.0.1:0'] : []),
    ...(command.args ??
      (compiled
        ? [...preloads, ...COMPILED_MAIN]
        : [...NODE_FLAGS, '--import', 'tsx', ...preloads, path.join(root, 'src/main.ts')])),
  ];
  // A compiled node's recorder installs its probe in dist/'s module, the one dist/'s actor runtime reads.
  const probe = compiled ? { TURN_PROBE_MODULE: path.join(root, 'dist/actors/runtime/turn-probe.js') } : {};
  const proc = spawn(command.execPath ?? process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env, ...probe, LOG_LEVEL: env.CHILD_LOG_LEVEL ?? 'info', NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const waiters = new Set<{
    match: (rec: Record<string, unknown>) => boolean;
    resolve: (rec: Record<string, unknown>) => void;
  }>();
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  let stderr = '';
  let inspectorUrl: string | undefined;
  proc.stderr!.on('data', (d) => {
    stderr += d;
    if (!command.inspect) return;
    stderr = stderr.replace(INSPECTOR_NOTICE, (_, url?: string) => ((inspectorUrl ??= url), ''));
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`child node did not start within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    const early = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`child node exited with ${code} before starting\n${stderr}`));
    };
    proc.once('exit', early);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line);
      } catch {
        return;
      }
      logs.push(rec);
      for (const w of waiters) {
        if (!w.match(rec)) continue;
        waiters.delete(w);
        w.resolve(rec);
      }
      if (rec.msg === 'node started') {
        clearTimeout(timer);
        proc.removeListener('exit', early);
        resolve({
          proc,
          url: String(rec.url ?? ''),
          metricsUrl: String(rec.metricsUrl ?? ''),
          logs,
          stderr: () => stderr,
          ...(inspectorUrl ? { inspectorUrl } : {}),
          nextLog(match, waitMs = 10_000) {
            return new Promise((res, rej) => {
              const w = {
                match,
                resolve: (r: Record<string, unknown>) => {
                  clearTimeout(t);
                  res(r);
                },
              };
              const t = setTimeout(() => {
                waiters.delete(w);
                rej(new Error(`no matching log line within ${waitMs} ms`));
              }, waitMs);
              waiters.add(w);
            });
          },
          async kill() {
            proc.kill('SIGKILL');
            await exited;
          },
          async stop() {
            proc.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
  });
}

/**
 * Runs src/main.ts with `env` until it exits by itself (a refused configuration) and returns its exit
 * code and stderr; rejects if it starts serving instead.
 */
export function runChildNodeToExit(
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ code: number | null; stderr: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/main.ts')], {
    cwd: root,
    env: { ...process.env, ...env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`child node neither exited nor started within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      if (!line.includes('"node started"')) return;
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error('child node started although its configuration should have been refused'));
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
