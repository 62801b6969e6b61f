import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error plain ESM script without types
import { ensureSchemathesis, localDir } from '../../scripts/services.mjs';
import { tokenFor } from '../support/auth.js';
import { freePort } from '../support/net.js';
import { startTestNode, type TestNode } from '../support/node.js';
import { seedTenant, type SeededTenant } from '../resilience/isolation/seed.js';
import { FUZZ_ENV } from '../resilience/hostile/kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Test cases per operation and phase: bounded so the three runs stay within about three minutes on two cores. */
const MAX_EXAMPLES = process.env.SCHEMATHESIS_MAX_EXAMPLES ?? '2';
const SEED = process.env.SCHEMATHESIS_SEED ?? '20260105';

interface Run {
  code: number | null;
  output: string;
  generated: number;
}

/** Runs schemathesis with every check and phase against the document the node serves. */
function schemathesis(
  node: TestNode,
  tenant: string,
  who: string,
  token: string | undefined,
  exclude: string[],
): Promise<Run> {
  const bin = path.join(path.dirname((ensureSchemathesis as () => string)()), 'schemathesis');
  const dir = path.join(localDir as string, 'schemathesis');
  mkdirSync(dir, { recursive: true });
  const args = [
    '--config-file',
    path.join(here, 'schemathesis.toml'),
    'run',
    `${node.url}/api/docs/openapi.json`,
    '--url',
    node.url!,
    '-H',
    `Host: ${tenant}.localhost`,
    ...(token ? ['-H', `Authorization: Bearer ${token}`] : []),
    // Signed out, nothing can be created for the stateful phase's links to carry: it runs signed in.
    '--checks',
    'all',
    '--phases',
    token ? 'examples,coverage,fuzzing,stateful' : 'examples,coverage,fuzzing',
    // One worker: hypothesis's lambda descriptions race in CPython 3.11's AST compiler across threads.
    '-n',
    MAX_EXAMPLES,
    '--seed',
    SEED,
    '--workers',
    '1',
    '--no-color',
    '--output-truncate',
    'true',
    ...exclude.flatMap((id) => ['--exclude-operation-id', id]),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => {
      writeFileSync(path.join(dir, `${who}.log`), output);
      resolve({ code, output, generated: Number(/(\d+) generated/.exec(output)?.[1] ?? 0) });
    });
  });
}

describe('contract: schemathesis against the served OpenAPI document (every check, stateful phase included)', () => {
  let node: TestNode;
  let t: SeededTenant;
  const total = { cases: 0 };
  beforeAll(async () => {
    (ensureSchemathesis as () => string)();
    // With the embedded identity provider, so the code flow and back-channel logout reach a real realm.
    const port = await freePort();
    node = await startTestNode({
      ROLES: 'idp,http,hub,actors',
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...FUZZ_ENV,
      ACCESS_TOKEN_TTL_SECONDS: '3600',
    });
    t = await seedTenant(node, 'stc', 'STC');
  }, 300_000);
  afterAll(async () => {
    process.stdout.write(`schemathesis: ${total.cases} test cases in three runs\n`);
    await node?.destroy();
  });

  // Signed in, logout would end the run's own session (it is exercised signed out and by its own tests).
  for (const who of ['clinician', 'patient', 'nobody'] as const) {
    it(`finds no failure signed in as ${who === 'nobody' ? 'no one' : `a ${who}`}`, async () => {
      // A fresh token per run: the seeded ones may have expired during the runs before.
      const token = who === 'nobody' ? undefined : await tokenFor(node, t.name, t.users[who]!.username);
      const run = await schemathesis(node, t.name, who, token, who === 'nobody' ? [] : ['account.logout']);
      total.cases += run.generated;
      expect(run.generated).toBeGreaterThan(100);
      if (run.code !== 0)
        throw new Error(
          `schemathesis (${who}) failed, exit ${run.code} (.local/schemathesis/${who}.log):\n${run.output.slice(-6000)}`,
        );
    }, 300_000);
  }
});
