import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { benchRoot } from './paths.js';
import { spawnNode } from './hosts.js';

export interface LoadProcess<R> {
  pid: number;
  /** Resolves with the next interim message of the given type. */
  when<T = any>(type: string): Promise<T>;
  send(msg: Record<string, unknown>): void;
  /** The final `result` message; rejects if the process dies without one. */
  result: Promise<R>;
  kill(): void;
}

/**
 * Starts a load generator (bench/load/<name>.ts) as its own process on loopback. Every generator has
 * a hard deadline (`deadlineMs`, enforced inside and again here) so nothing outlives its benchmark.
 */
export function spawnLoad<R = any>(
  name: string,
  params: Record<string, unknown> & { deadlineMs: number },
  opts: { logFile: string; nofile?: number },
): LoadProcess<R> {
  const paramsFile = `${opts.logFile}.params.json`;
  mkdirSync(path.dirname(paramsFile), { recursive: true });
  writeFileSync(paramsFile, JSON.stringify(params));
  const proc = spawnNode(['--import', 'tsx', path.join(benchRoot, 'load', `${name}.ts`), `@${paramsFile}`], opts);
  const waiters = new Map<string, ((m: any) => void)[]>();
  const seen = new Map<string, any>();
  let settle: { resolve(v: R): void; reject(e: Error): void };
  const result = new Promise<R>((resolve, reject) => (settle = { resolve, reject }));
  const guard = setTimeout(() => proc.kill('SIGKILL'), params.deadlineMs + 15_000);
  proc.on('message', (m: { type: string; error?: string }) => {
    if (m.type === 'result') {
      if (m.error) settle.reject(new Error(`load ${name}: ${m.error}`));
      else settle.resolve(m as R);
      return;
    }
    seen.set(m.type, m);
    for (const w of waiters.get(m.type) ?? []) w(m);
    waiters.delete(m.type);
  });
  proc.once('exit', (code, sig) => {
    clearTimeout(guard);
    rmSync(paramsFile, { force: true });
    settle.reject(new Error(`load ${name} exited (${code ?? sig}) without a result; see ${opts.logFile}`));
    for (const ws of waiters.values()) for (const w of ws) w({ type: 'exit', code });
  });
  return {
    pid: proc.pid!,
    when: (type) => {
      if (seen.has(type)) return Promise.resolve(seen.get(type));
      return new Promise((resolve) => waiters.set(type, [...(waiters.get(type) ?? []), resolve]));
    },
    send: (msg) => proc.connected && proc.send(msg),
    result,
    kill: () => proc.kill('SIGKILL'),
  };
}

/** Runs one generator to completion and returns its result. */
export function runLoad<R = any>(
  name: string,
  params: Record<string, unknown> & { deadlineMs: number },
  logFile: string,
): Promise<R> {
  return spawnLoad<R>(name, params, { logFile }).result;
}
