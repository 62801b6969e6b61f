import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const codegen = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@graphql-codegen/cli/package.json')),
  'esm/bin.js',
);

/** src/http/graphql/generated/types.ts matches the schema it comes from (regenerate: npm run generate:graphql). */
describe('GraphQL generated resolver types', () => {
  it('are current with src/http/graphql/schema.ts', () => {
    let out = '';
    try {
      execFileSync(process.execPath, [codegen, '--config', 'scripts/graphql-codegen.ts', '--check'], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (e) {
      const err = e as { stdout?: Buffer; stderr?: Buffer };
      out = `${String(err.stdout ?? '')}${String(err.stderr ?? e)}`;
    }
    expect(out).toBe('');
  }, 600_000);
});
