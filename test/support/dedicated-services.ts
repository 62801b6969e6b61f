import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './net.js';

/**
 * A private service process (Redis or a MongoDB-protocol server) on an ephemeral loopback port with
 * its own data directory, so restart tests never touch the shared instances other tests use.
 * `stop`/`kill` end the process; `start` brings it back on the SAME port with the SAME data.
 */
export interface DedicatedService {
  url: string;
  port: number;
  dataDir: string;
  start(): Promise<void>;
  /** SIGTERM and wait (Redis flushes its AOF; FerretDB closes its SQLite files). */
  stop(): Promise<void>;
  /** SIGKILL and wait: a crash, nothing flushed beyond what the persistence setting already wrote. */
  kill(): Promise<void>;
  /** Stops the process and removes its data directory. */
  destroy(): Promise<void>;
  /** Sends a signal to the running process (SIGSTOP freezes it with its connections open, SIGCONT resumes). */
  signal(signal: NodeJS.Signals): void;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not come up within ${timeoutMs} ms`);
}

function which(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Runs `argv(port, dir)` as a child; the process is restartable on the same port and directory. */
export async function dedicated(
  name: string,
  scheme: string,
  argv: (port: number, dir: string) => [string, string[]],
): Promise<DedicatedService> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), `dedicated-${name}-`));
  let proc: ChildProcess | undefined;
  const end = async (signal: NodeJS.Signals) => {
    const p = proc;
    proc = undefined;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await exited;
    await waitUntil(async () => !(await portOpen(port)), `${name} port release`, 10_000);
  };
  const svc: DedicatedService = {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    dataDir,
    async start() {
      if (proc) return;
      const [cmd, args] = argv(port, dataDir);
      proc = spawn(cmd, args, { stdio: 'ignore' });
      // A server that never came up is not left running behind the failed test.
      await waitUntil(() => portOpen(port), name).catch(async (e) => {
        await end('SIGKILL');
        throw e;
      });
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    async destroy() {
      await end('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
    signal(signal) {
      if (!proc) throw new Error(`${name} is not running`);
      proc.kill(signal);
    },
  };
  await svc.start();
  return svc;
}

/**
 * A private redis-server. Persistence: AOF with `appendfsync always` (the default here), so every
 * acknowledged write survives even a SIGKILL of Redis; pass 'everysec' to test the production
 * trade-off (at most about one second of writes lost on a crash, none on a clean restart).
 */
export async function dedicatedRedis(
  fsync: 'always' | 'everysec' = 'always',
  auth?: { user: string; password: string },
): Promise<DedicatedService> {
  // An ACL user with every right, and the default user switched off: what production runs.
  const acl = auth
    ? ['--user', 'default', 'off', '--user', auth.user, 'on', `>${auth.password}`, '~*', '&*', '+@all']
    : [];
  const svc = await dedicated('redis', 'redis', (port, dir) => [
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      fsync,
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
      ...acl,
    ],
  ]);
  return auth
    ? {
        ...svc,
        url: `redis://${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.password)}@127.0.0.1:${svc.port}`,
      }
    : svc;
}

/**
 * A private MongoDB-protocol server: mongod when on PATH, else the project's durable embedded default
 * (mongo-java-server, H2 backend, commit per write), whose jars the test set-up has already fetched, so
 * a fresh machine builds nothing here.
 */
export async function dedicatedMongo(): Promise<DedicatedService> {
  const mongod = which('mongod');
  if (!mongod) return dedicatedMongoJavaServer('h2');
  return dedicated('mongo', 'mongodb', (port, dir) => [
    mongod,
    ['--bind_ip', '127.0.0.1', '--port', String(port), '--dbpath', dir],
  ]).then((s) => ({ ...s, url: `${s.url}/` }));
}

/**
 * A private mongo-java-server, the embedded default of `npm start`: `h2` keeps its data in one file in
 * the data directory and commits every write before answering (kill -9 loses nothing acknowledged).
 */
export async function dedicatedMongoJavaServer(
  backend: 'h2' | 'memory' = 'h2',
  jvmOptions: string[] = [],
): Promise<DedicatedService> {
  // @ts-expect-error plain ESM script without types
  const { mongoJavaServerCommand } = await import('../../scripts/services.mjs');
  return dedicated(
    'mongo-java-server',
    'mongodb',
    (port, dir) => mongoJavaServerCommand(backend, port, path.join(dir, 'data.mv'), jvmOptions) as [string, string[]],
  ).then((s) => ({ ...s, url: `${s.url}/` }));
}
