import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
// @ts-expect-error plain ESM script without types
import { ensurePythonSocketIo } from '../../scripts/services.mjs';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'python', 'hub_client.py');

/** The python executable of the project's python-socketio venv (created on first use, like the other services). */
export function pythonSocketIo(): string {
  return (ensurePythonSocketIo as () => string)();
}

export interface PythonHubClient {
  /** Resolves with the first line of `event` printed by the script (lines already printed count). */
  next(event: string): Promise<Record<string, any>>;
  /** Resolves with the script's exit code. */
  exited: Promise<number | null>;
  stderr(): string;
  kill(): void;
}

/**
 * Runs test/support/python/hub_client.py (python-socketio, default transports) against `url` (the
 * tenant host, e.g. http://acme.localhost:PORT). See the script for the lines it prints.
 */
export function runPythonHubClient(
  python: string,
  cfg: { url: string; token?: string; timeoutSeconds?: number },
): PythonHubClient {
  const proc = spawn(python, [script, JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, any>[] = [];
  const waiters: { event: string; resolve: (l: Record<string, any>) => void }[] = [];
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  createInterface({ input: proc.stdout }).on('line', (text) => {
    let line: Record<string, any>;
    try {
      line = JSON.parse(text);
    } catch {
      stderr += `${text}\n`;
      return;
    }
    lines.push(line);
    for (const w of waiters.filter((x) => x.event === line.event)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return {
    next(event) {
      const hit = lines.find((l) => l.event === event);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        waiters.push({ event, resolve });
        void exited.then((code) =>
          reject(new Error(`python client exited (${code}) before '${event}': ${JSON.stringify(lines)}\n${stderr}`)),
        );
      });
    },
    exited,
    stderr: () => stderr,
    kill: () => void proc.kill('SIGKILL'),
  };
}
