import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../support/net.js';
import { dedicatedRedis } from '../../support/dedicated-services.js';

// @ts-expect-error plain ESM script without types
const { ensureRedis } = (await import('../../../scripts/services.mjs')) as {
  ensureRedis(port: number, opts?: { dir?: string }): Promise<string>;
};

/** PING sent as a client without credentials (raw RESP): the first reply line. */
function pingWithoutPassword(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1' }, () => s.write('*1\r\n$4\r\nPING\r\n'));
    let buf = '';
    s.on('data', (d) => {
      buf += d;
      if (buf.includes('\r\n')) {
        s.destroy();
        resolve(buf.split('\r\n')[0]!);
      }
    });
    s.once('error', reject);
  });
}

describe('the local Redis started by scripts/services.mjs', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'local-redis-'));
  let started: Redis | undefined;
  afterAll(async () => {
    // The script's server is detached: shut it down through its own credentials.
    await started?.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
    started?.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs with an ACL user and hands out a URL with its credentials; a second start reuses it', async () => {
    const port = await freePort();
    const url = await ensureRedis(port, { dir });
    started = new Redis(url, { maxRetriesPerRequest: 1 });
    const u = new URL(url);
    expect({ user: u.username, hasPassword: u.password.length >= 16, port: u.port }).toEqual({
      user: 'consult',
      hasPassword: true,
      port: String(port),
    });
    expect(await started.ping()).toBe('PONG');
    expect(await pingWithoutPassword(port)).toMatch(/NOAUTH/);
    expect(await ensureRedis(port, { dir })).toBe(url);
  });

  it('reuses a password-less Redis already on the port as it is, without reconfiguring it', async () => {
    const other = await dedicatedRedis();
    try {
      expect(await ensureRedis(other.port, { dir })).toBe(`redis://127.0.0.1:${other.port}`);
      expect(await pingWithoutPassword(other.port)).toBe('+PONG');
    } finally {
      await other.destroy();
    }
  });
});
