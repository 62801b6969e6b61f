import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { startTestNode, type TestNode } from '../../support/node.js';
import { freePort, tokenFor } from '../../support/auth.js';
import { isLoopbackName } from '../../../packages/client/src/localhost.js';

const run = promisify(execFile);

/** The README's SDK example: the TypeScript block that imports '@consult/client'. */
function readmeExample(): string {
  const readme = readFileSync('README.md', 'utf8');
  const block = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .find((b) => b.includes('@consult/client'));
  if (!block) throw new Error('README.md has no TypeScript example importing @consult/client');
  return block;
}

/**
 * The README's example, run as written by Node.js against a node started like `npm start` (every role,
 * the demo tenant seeded): only the port differs (the test's node listens on an ephemeral one), and the
 * package is this checkout's sources. Nothing resolves `demo.localhost` on this machine but the client.
 */
describe('the README example of the client SDK', () => {
  let node: TestNode;
  let port: number;
  const dir = mkdtempSync(path.join(tmpdir(), 'readme-example-'));

  beforeAll(async () => {
    port = await freePort();
    node = await startTestNode({
      ROLES: 'http,hub,actors,workers,idp',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      SEED_DEMO: 'true',
    });
  }, 120_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await node?.destroy();
  });

  it('knows which names are loopback (RFC 6761)', () => {
    for (const n of ['localhost', 'demo.localhost', 'A.B.LOCALHOST', 'demo.localhost.'])
      expect(isLoopbackName(n)).toBe(true);
    for (const n of ['localhost.example', 'demolocalhost', 'example.org', '127.0.0.1'])
      expect(isLoopbackName(n)).toBe(false);
  });

  it('runs as written: PIN sign-in, REST, a call over the hub', async () => {
    const example = readmeExample();
    expect(example).toContain("const baseUrl = 'http://demo.localhost:8080'");
    // "after setting a PIN": alice sets the PIN the example signs in with.
    const pin = /signInWithPin\([^,]+,\s*'alice',\s*'(\d+)'\)/.exec(example)?.[1];
    expect(pin).toBeDefined();
    const alice = await tokenFor(node, 'demo', 'alice');
    const set = await node.http.post('/api/account/resetPin', { tenant: 'demo', token: alice, body: { newPin: pin } });
    expect(set.status).toBeLessThan(300);

    const sdk = pathToFileURL(path.resolve('packages/client/src/index.ts')).href;
    const script = example
      .replace("from '@consult/client'", `from '${sdk}'`)
      .replace('http://demo.localhost:8080', `http://demo.localhost:${port}`);
    const file = path.join(dir, 'example.mts');
    writeFileSync(file, script);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', file], {
      cwd: path.resolve('.'),
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      timeout: 90_000,
    });
    expect(stdout).toContain('Dr Alice Moreau');
    expect(stdout).toMatch(/calling Dr Bob Okafor \S+/);
  }, 120_000);
});
