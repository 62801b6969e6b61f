import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mintAskId } from './ask-ids.js';

describe('minted ask ids', () => {
  it('are distinct, short, and fit the transport and a Redis key', () => {
    const ids = Array.from({ length: 10_000 }, () => mintAskId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [ids[0]!, ids.at(-1)!]) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}\.[0-9a-z]+$/);
      expect(id.length).toBeLessThanOrEqual(30);
    }
    expect(ids[0]!.slice(0, 23)).toBe(ids.at(-1)!.slice(0, 23));
  });

  it('differ between processes (each has its own random prefix)', () => {
    const mint = `import('./src/actors/runtime/ask-ids.ts').then((m) => process.stdout.write(m.mintAskId()))`;
    const run = () =>
      execFileSync(process.execPath, ['--import', 'tsx', '-e', mint], { encoding: 'utf8', cwd: process.cwd() });
    const [a, b] = [run(), run()];
    expect(a.endsWith('.0')).toBe(true);
    expect(b.endsWith('.0')).toBe(true);
    expect(a).not.toBe(b);
  });
});
