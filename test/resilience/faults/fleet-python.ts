import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const pythonDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../support/python');
/** The fleet's clients; `narrowWindow`: the same with the library's connect window held open (a test's). */
export const FLEET_SCRIPTS = {
  fleet: path.join(pythonDir, 'fleet_clients.py'),
  narrowWindow: path.join(pythonDir, 'fleet_clients_narrow_window.py'),
};

type Line = Record<string, any>;

/**
 * The fleet's python-socketio clients, all in one python process (test/support/python/fleet_clients.py):
 * commands go to its stdin, every line it prints is handed to the client it names. A line that is not
 * JSON, or anything on stderr, is kept and reported (`problems`), never dropped.
 */
export class PythonFleet {
  private readonly proc: ChildProcess;
  private readonly handlers = new Map<number, (l: Line) => void>();
  private readonly acks = new Map<string, (r: any) => void>();
  private readonly closed = new Map<number, () => void>();
  private next = 0;
  private calls = 0;
  private stderrText = '';
  readonly problems: string[] = [];
  readonly exited: Promise<number | null>;

  constructor(python: string, script = FLEET_SCRIPTS.fleet) {
    this.proc = spawn(python, ['-u', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stderr!.on('data', (d) => (this.stderrText += d));
    this.exited = new Promise((r) => this.proc.once('exit', (code) => r(code)));
    createInterface({ input: this.proc.stdout! }).on('line', (text) => {
      let l: Line;
      try {
        l = JSON.parse(text);
      } catch {
        this.problems.push(text.slice(0, 300));
        return;
      }
      if (l.event === 'ack') {
        const k = `${l.c}:${l.id}`;
        this.acks.get(k)?.(l.result);
        this.acks.delete(k);
      } else if (l.event === 'closed') this.closed.get(l.c)?.();
      this.handlers.get(l.c)?.(l);
    });
  }

  /** What the python process wrote to stderr (python-socketio logs nothing there unless something broke). */
  stderr(): string {
    return this.stderrText;
  }

  private send(cmd: Record<string, unknown>): void {
    this.proc.stdin!.write(`${JSON.stringify(cmd)}\n`);
  }

  /** A new client connecting to `url` with `token`; its lines go to `onLine`. */
  open(url: string, token: string, onLine: (l: Line) => void): number {
    const c = this.next++;
    this.handlers.set(c, onLine);
    this.send({ op: 'open', c, url, token });
    return c;
  }

  token(c: number, token: string): void {
    this.send({ op: 'token', c, token });
  }

  /** A hub method called by client `c`: resolves with its acknowledgement (`{ ok, data | error }`). */
  call(c: number, method: string, args: unknown[]): Promise<any> {
    const id = this.calls++;
    return new Promise((resolve) => {
      this.acks.set(`${c}:${id}`, resolve);
      this.send({ op: 'call', c, id, method, args });
    });
  }

  /** Closes client `c` (resolves at once when the process is gone). */
  close(c: number): Promise<void> {
    const closed = new Promise<void>((resolve) => {
      this.closed.set(c, resolve);
      if (this.proc.exitCode === null) this.send({ op: 'close', c });
      else resolve();
    });
    return Promise.race([closed, this.exited.then(() => undefined)]);
  }

  /** Ends the process once its clients closed (they were asked first). */
  async stop(): Promise<number | null> {
    this.send({ op: 'exit' });
    this.proc.stdin!.end();
    // A client stuck in a reconnection attempt does not hold the process up past its own time limits.
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
