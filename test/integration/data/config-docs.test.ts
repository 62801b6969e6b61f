import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../../src/config/config.js';
import { EnvSchema } from '../../../src/config/env-schema.js';

const root = path.resolve(process.cwd());
const read = (f: string) => readFileSync(path.join(root, f), 'utf8');
const KEYS = Object.keys(EnvSchema.shape);

describe('configuration documentation stays in sync with EnvSchema', () => {
  it('documents every setting in .env.example (as KEY= or # KEY=)', () => {
    const text = read('.env.example');
    const missing = KEYS.filter((k) => !new RegExp(`^#?\\s*${k}=`, 'm').test(text));
    expect(missing).toEqual([]);
  });

  it('documents every setting in docs/configuration.md (a table row per key)', () => {
    const text = read('docs/configuration.md');
    const missing = KEYS.filter((k) => !new RegExp(`^\\| \`${k}\` \\|`, 'm').test(text));
    expect(missing).toEqual([]);
  });

  it('ships an .env.example whose active lines are a valid configuration', () => {
    const active = Object.fromEntries(
      read('.env.example')
        .split('\n')
        .filter((l) => /^[A-Z0-9_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(() => loadConfig(active)).not.toThrow();
  });
});
