import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * V8 keeps fast paths for built-ins behind "protectors": global flags that a single act anywhere in
 * the process turns off for good, slowing every later use. A dependency declaring
 * `class X extends String` (ioredis 6's RESP3 VerbatimString) turned off the string-wrapper one and,
 * with it, string building everywhere: saxes read a sheet at a third of its speed in the node, and
 * the pending-user import spent twice the CPU per row (decision 1138). This loads what a node loads
 * (the composition root and the modules it imports lazily) in a child process and checks that every
 * protector a bare process has is still on.
 */

const root = path.resolve(import.meta.dirname, '../..');
const PROTECTORS = [
  'ArraySpeciesProtector',
  'PromiseSpeciesProtector',
  'RegExpSpeciesProtector',
  'TypedArraySpeciesProtector',
  'TypedArrayLengthProtector',
  'MapIteratorProtector',
  'SetIteratorProtector',
  'StringIteratorProtector',
  'ArrayIteratorProtector',
  'NoElementsProtector',
  'IsConcatSpreadableProtector',
  'StringWrapperToPrimitiveProtector',
];

/** The protectors' states in a child process after it imported `modules` (none: a bare process). */
function protectorsAfter(modules: string[]): Record<string, boolean> {
  const script = `
    const names = ${JSON.stringify(PROTECTORS)};
    (async () => {
      for (const m of ${JSON.stringify(modules)}) await import(m);
      const state = Object.fromEntries(names.map((n) => [n, new Function('return %' + n + '()')()]));
      process.stdout.write(JSON.stringify(state));
      process.exit(0);
    })().catch((e) => { console.error(e); process.exit(1); });
  `;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
    timeout: 60_000,
  });
  return JSON.parse(out) as Record<string, boolean>;
}

describe("V8's fast paths in a node's process", () => {
  it('loading the node and its lazily imported modules turns no protector off', () => {
    // The bare process runs the same TypeScript loader (which turns the typed-array length protector
    // off); the string-wrapper protector, the one a dependency has turned off before, is on in it.
    const bare = protectorsAfter([]);
    expect(bare.StringWrapperToPrimitiveProtector).toBe(true);
    const node = protectorsAfter([path.join(root, 'src/composition/node.ts'), 'sharp', 'livekit-server-sdk']);
    expect(node).toEqual(bare);
  });
});
