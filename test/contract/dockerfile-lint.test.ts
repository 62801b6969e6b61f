import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { NODE_FLAGS } from '../../scripts/node-flags.mjs';

// @ts-expect-error plain ESM script without types
const { ensureHadolint } = (await import('../../scripts/services.mjs')) as { ensureHadolint: () => string };

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dockerfile = path.join(root, 'Dockerfile');

/**
 * The image cannot be built where no Docker engine runs, so the Dockerfile is linted instead (decision
 * 832): hadolint (pinned, from its registry package, installed into .local/venv-hadolint) must report
 * nothing, at any level. The structure the runtime relies on is checked too.
 */
describe('Dockerfile', () => {
  it('passes hadolint with no finding', () => {
    const r = spawnSync(ensureHadolint(), ['--no-color', '--failure-threshold', 'info', dockerfile], {
      encoding: 'utf8',
    });
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.status).toBe(0);
  }, 120_000);

  it('runs the compiled service on Node.js 24 as a non-root user, with a health check on /readyz', () => {
    const text = readFileSync(dockerfile, 'utf8');
    const stages = text.split('\n').filter((l) => /^FROM /.test(l));
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages.at(-1)).toMatch(/^FROM node:24[-.\w]*-slim\b/);
    const runtime = text.slice(text.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^USER (?!0\b|root\b)\S+/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n?.*\/readyz/m);
    // The product's node flags (scripts/node-flags.mjs), as `npm start` runs it.
    expect(runtime).toMatch(/^CMD \[.*\]$/m);
    expect(JSON.parse(/^CMD (\[.*\])$/m.exec(runtime)![1]!)).toEqual(['node', ...NODE_FLAGS, 'dist/main.js']);
    expect(runtime).not.toMatch(/tsx|COPY src\b/);
  });
});
