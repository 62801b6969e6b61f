import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config/config.js';

/**
 * A killed node's clients reconnect to the others all at once. While a node is busy, the kernel queues
 * the connections it has not accepted yet, up to the listener's backlog; beyond it, it drops them and
 * each client's TCP tries again 1, 3, 7 s later. At Node's default (511) a 10,000-connection storm
 * overflowed it 23,000 times (decision 1145). The public listener (listenPublic, as a node starts it)
 * is held busy in a process of its own while more connections than Node's default arrive: all of them
 * must be queued before it runs again.
 */
describe('the public listener under a burst of connections', () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  afterEach(() => {
    child?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('HTTP_LISTEN_BACKLOG defaults to 4096', () => {
    expect(loadConfig({}).http.listenBacklog).toBe(4096);
    expect(loadConfig({ HTTP_LISTEN_BACKLOG: '1000' }).http.listenBacklog).toBe(1000);
  });

  it('queues 800 connections that arrive while the node is busy, with the default backlog', async () => {
    // The kernel caps every backlog at net.core.somaxconn (4096 since Linux 5.4): below 800 this cannot hold.
    expect(Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'))).toBeGreaterThanOrEqual(800);
    dir = mkdtempSync(path.join(os.tmpdir(), 'backlog-'));
    const release = path.join(dir, 'release');
    const listen = path.resolve('src/http/listen.ts');
    // The node: the public listener with the configured default, then its event loop held until released.
    const script = `
      const http = await import('node:http'); const fs = await import('node:fs');
      const { listenPublic } = await import(${JSON.stringify(listen)});
      const { loadConfig } = await import(${JSON.stringify(path.resolve('src/config/config.ts'))});
      const server = http.createServer();
      await listenPublic(server, { ...loadConfig({}).http, host: '127.0.0.1', port: 0 });
      process.stdout.write(server.address().port + '\\n');
      process.stdin.once('data', () => {
        process.stdout.write('busy\\n');
        while (!fs.existsSync(${JSON.stringify(release)})) {}
        process.stdout.write('free\\n');
      });`;
    const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    child = proc;
    const lines: string[] = [];
    const waiters: { match: (l: string) => boolean; resolve: (l: string) => void }[] = [];
    let buf = '';
    proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        lines.push(line);
        for (const w of waiters.splice(0))
          if (w.match(line)) w.resolve(line);
          else waiters.push(w);
      }
    });
    const next = (match: (l: string) => boolean) =>
      new Promise<string>((resolve) => {
        const seen = lines.find(match);
        if (seen) resolve(seen);
        else waiters.push({ match, resolve });
      });
    const port = Number(await next((l) => /^\d+$/.test(l)));
    proc.stdin!.write('go\n');
    await next((l) => l === 'busy');
    const sockets: net.Socket[] = [];
    let connected = 0;
    const all = new Promise<void>((resolve, reject) => {
      for (let i = 0; i < 800; i++) {
        const s = net.connect(port, '127.0.0.1');
        sockets.push(s);
        s.once('connect', () => {
          if (++connected === 800) resolve();
        });
        s.once('error', reject);
      }
    });
    try {
      // Beyond the backlog the kernel drops the SYNs: those connections never complete while the node is busy.
      const guard = new Promise<never>((_, reject) => {
        const t = setTimeout(
          () => reject(new Error(`only ${connected} of 800 connections queued while the node was busy`)),
          20_000,
        );
        void all.finally(() => clearTimeout(t));
      });
      await Promise.race([all, guard]);
      expect(existsSync(release)).toBe(false);
      expect(lines).not.toContain('free');
    } finally {
      writeFileSync(release, '');
      for (const s of sockets) s.destroy();
    }
    await next((l) => l === 'free');
  }, 60_000);
});
