import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** packages/client's generated sources match the contract they come from (regenerate: npm run generate -w @consult/client). */
describe('client SDK generated types', () => {
  it('are current with docs/api/openapi.json and the hub event maps', () => {
    let out = '';
    try {
      execFileSync(process.execPath, ['packages/client/scripts/generate.mjs', '--check'], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      out = String((e as { stderr?: Buffer }).stderr ?? e);
    }
    expect(out).toBe('');
  }, 600_000);
});
