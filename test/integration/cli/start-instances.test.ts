import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { uniqueId } from '../../support/env.js';
import { freePort } from '../../support/net.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const { inEngines, NODE_RELEASES } = await import('../../../scripts/node-line.mjs');

/** A listener that accepts connections and never answers: a port taken by some other program. */
async function occupied(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The addresses a port is listened on, from the kernel's table (IPv4; `127.0.0.1`, `0.0.0.0`, ...). */
function listenAddresses(port: number): string[] {
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[3] === '0A' && f[1] && Number.parseInt(f[1].split(':')[1]!, 16) === port)
    .map((f) => {
      const hex = f[1]!.split(':')[0]!;
      return [3, 2, 1, 0].map((i) => Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
    });
}

interface Started {
  proc: ChildProcess;
  stderr: () => string;
  /** Resolves with the first JSON log line matching `msg`, or rejects when the process exits first. */
  logged: Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

/** `npm start` (scripts/start.mjs) with `env` on top of this process's, HOST and GRPC_HOST left unset. */
function npmStart(env: Record<string, string>, msg = 'node started'): Started {
  const base = { ...process.env };
  delete base.HOST;
  delete base.GRPC_HOST;
  delete base.LOCAL_NODE;
  const proc = spawn(process.execPath, ['scripts/start.mjs'], {
    cwd: root,
    env: { ...base, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const logged = new Promise<Record<string, unknown>>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const rec = JSON.parse(line) as Record<string, unknown>;
        if (rec.msg === msg) resolve(rec);
      } catch {
        /* the banner and other plain lines */
      }
    });
    void exited.then((code) => reject(new Error(`npm start exited with ${code}\n${stderr}`)));
  });
  logged.catch(() => undefined);
  return { proc, stderr: () => stderr, logged, exited };
}

describe('engines', () => {
  it('holds the supported lines from their first release on, and nothing else', () => {
    const range = '^22.15.0 || ^24.11.0';
    expect(
      ['v20.20.2', 'v22.14.9', 'v22.15.0', 'v22.23.5', 'v23.11.0', 'v24.10.0', 'v24.11.0', 'v24.22.3', 'v26.1.0'].map(
        (v) => [v, inEngines(v, range)],
      ),
    ).toEqual([
      ['v20.20.2', false],
      ['v22.14.9', false],
      ['v22.15.0', true],
      ['v22.23.5', true],
      ['v23.11.0', false],
      ['v24.10.0', false],
      ['v24.11.0', true],
      ['v24.22.3', true],
      ['v26.1.0', false],
    ]);
    // The releases the project fetches are inside the project's own engines.
    for (const v of Object.values(NODE_RELEASES)) expect(inEngines(`v${v}`)).toBe(true);
  });
});

describe('npm start beside another instance', () => {
  const id = uniqueId();
  const storage = mkdtempSync(path.join(tmpdir(), 'start-instances-'));
  let redisPortTaken: Awaited<ReturnType<typeof occupied>>;
  const env = (extra: Record<string, string>) => ({
    REDIS_URL: process.env.TEST_REDIS_URL!,
    MONGODB_URI: process.env.TEST_MONGODB_URI!,
    // The local Redis's port holds something that is not Redis: a start that probes it fails.
    LOCAL_REDIS_PORT: String(redisPortTaken.port),
    REDIS_PREFIX: `test:${id}:`,
    MONGODB_CATALOG_DB: `tc_${id}`,
    MONGODB_TENANT_DB_PREFIX: `tt_${id}_`,
    STORAGE_FS_ROOT: storage,
    LOG_LEVEL: 'info',
    ...extra,
  });
  beforeAll(async () => {
    redisPortTaken = await occupied();
  });
  afterAll(async () => {
    await redisPortTaken?.close();
    rmSync(storage, { recursive: true, force: true });
  });

  it('uses the Redis and MongoDB it is given and listens on loopback only, HTTP and gRPC alike', async () => {
    const [port, grpcPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const started = npmStart(
      env({ PORT: String(port), GRPC_PORT: String(grpcPort), METRICS_PORT: String(metricsPort) }),
    );
    try {
      await started.logged;
      expect(listenAddresses(port)).toEqual(['127.0.0.1']);
      expect(listenAddresses(grpcPort)).toEqual(['127.0.0.1']);
      expect(started.stderr()).not.toMatch(/LOCAL_REDIS_PORT|REDIS_URL/);
    } finally {
      started.proc.kill('SIGTERM');
      await started.exited;
    }
  }, 180_000);

  it('refuses a gRPC port that another program holds, by its setting, before starting anything', async () => {
    const grpcTaken = await occupied();
    try {
      const started = npmStart(
        env({ PORT: String(await freePort()), GRPC_PORT: String(grpcTaken.port), METRICS_PORT: '0' }),
      );
      expect(await started.exited).toBe(1);
      expect(started.stderr()).toContain(`port ${grpcTaken.port} (GRPC_PORT) is used by another program`);
    } finally {
      await grpcTaken.close();
    }
  }, 120_000);

  it(`runs on the line LOCAL_NODE names, fetched when needed, and says so in one line`, async () => {
    const taken = await occupied();
    try {
      // The port check comes after the switch: the run on Node 22 ends there, before any set-up.
      const started = npmStart({ ...env({ PORT: String(taken.port) }), LOCAL_NODE: '22' });
      expect(await started.exited).toBe(1);
      const lines = started.stderr().trim().split('\n');
      expect(lines.filter((l) => l.startsWith('[start] running on'))).toEqual([
        expect.stringMatching(
          new RegExp(`^\\[start\\] running on Node\\.js v${NODE_RELEASES[22]} \\(.*\\): LOCAL_NODE=22$`),
        ),
      ]);
      expect(lines).toContain(
        `[start] port ${taken.port} is used by another program: stop it or run with PORT=<free port>`,
      );
    } finally {
      await taken.close();
    }
  }, 180_000);
});
