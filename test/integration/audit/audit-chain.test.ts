import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { testEnv } from '../../support/env.js';
import { Mongo } from '../../../src/data/mongo.js';
import { AuditHeads, AuditRepository } from '../../../src/data/repositories/audit.repository.js';
import { AuditService } from '../../../src/core/audit/audit.service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const WRITERS = 3;
const PER_WRITER = 40;
const CONCURRENCY = 4;

interface Writer {
  proc: ChildProcess;
  ready: Promise<void>;
  done: Promise<{ writer: string; ids: string[] }>;
}

/** One writer process (test/support/audit-writer.ts): its own connection pool and head cache. */
function startWriter(env: Record<string, string>, writer: string, tenant: string): Writer {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test/support/audit-writer.ts')], {
    cwd: root,
    env: {
      ...process.env,
      ...env,
      NODE_OPTIONS: '',
      AUDIT_TENANT: tenant,
      AUDIT_WRITER: writer,
      AUDIT_COUNT: String(PER_WRITER),
      AUDIT_CONCURRENCY: String(CONCURRENCY),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const lines = createInterface({ input: proc.stdout! });
  let onReady: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  let result: { writer: string; ids: string[] } | undefined;
  lines.on('line', (line) => {
    if (line === 'ready') onReady();
    else if (line.startsWith('{')) result = JSON.parse(line);
  });
  // Settles once the process exited, so no pipe or process outlives the test.
  const done = new Promise<{ writer: string; ids: string[] }>((resolve, reject) =>
    proc.once('exit', (code) =>
      code === 0 && result ? resolve(result) : reject(new Error(`writer ${writer} exited with ${code}\n${stderr}`)),
    ),
  );
  return { proc, ready, done };
}

describe('audit trail: one chain across concurrent writer processes', () => {
  const env = testEnv();
  const tenant = 'chain';
  let mongo: Mongo;
  let audit: AuditService;

  beforeAll(async () => {
    mongo = await Mongo.connect({
      uri: env.MONGODB_URI!,
      catalogDb: env.MONGODB_CATALOG_DB!,
      tenantDbPrefix: env.MONGODB_TENANT_DB_PREFIX!,
      timeoutMs: 10_000,
    });
    const heads = new AuditHeads();
    audit = new AuditService({ audits: (t) => new AuditRepository(mongo.tenantDb(t), heads) });
  });
  afterAll(async () => {
    await mongo.tenantDb(tenant).conn.dropDatabase();
    await mongo.close();
  });

  it('keeps one gap-free chain while three processes append at once', async () => {
    // An entry before the race, so every writer starts from a non-empty chain and stale heads occur.
    const first = await audit.record(tenant, { action: 'test.genesis', outcome: 'success' });
    expect(first.seq).toBe(1);

    const writers = Array.from({ length: WRITERS }, (_, i) => startWriter(env, `w${i}`, tenant));
    await Promise.all(writers.map((w) => w.ready));
    for (const w of writers) w.proc.stdin!.end('go\n');
    const results = await Promise.all(writers.map((w) => w.done));

    const appended = results.flatMap((r) => r.ids);
    expect(appended).toHaveLength(WRITERS * PER_WRITER);

    const report = await audit.verifyLinks(tenant);
    expect(report).toMatchObject({ ok: true, verified: 1 + WRITERS * PER_WRITER });
    expect(report.firstBroken).toBeUndefined();

    const chain: string[] = [];
    for await (const e of audit.entries(tenant)) chain.push(e.id);
    expect(chain).toHaveLength(1 + WRITERS * PER_WRITER);
    expect(new Set(chain)).toEqual(new Set([first.id, ...appended]));

    // The writers really raced: entries of different writers interleave in the chain.
    const owners = (await audit.list(tenant, { action: 'test.append' }, 500)).map((e) => e.details!.writer);
    const switches = owners.filter((w, i) => i > 0 && w !== owners[i - 1]).length;
    expect(switches).toBeGreaterThan(WRITERS);
  }, 300_000);

  it('takes a burst of appends from one process (a node whose clients all join at once) in two inserts', async () => {
    const burst = 'burst';
    const BURST = 300;
    // Counts the inserts the burst costs (the driver's collection, instrumented, not replaced).
    const collection = mongo.tenantDb(burst).models.Audit.collection;
    const insertMany = collection.insertMany.bind(collection);
    let inserts = 0;
    collection.insertMany = ((...args: Parameters<typeof insertMany>) => (inserts++, insertMany(...args))) as never;
    const records = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        audit.record(burst, { action: 'test.burst', outcome: 'success', details: { i } }),
      ),
    );
    // Positions in the order the appends were made.
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: BURST }, (_, i) => i + 1));
    expect(await audit.verifyLinks(burst)).toMatchObject({ ok: true, verified: BURST });
    // The first append goes alone; the others, made while it was in flight, go together in the next
    // insert (decision 1107). One entry per insert was BURST inserts; racing writers about BURST^2 / 2.
    expect(inserts).toBe(2);
    await mongo.tenantDb(burst).conn.dropDatabase();
  }, 120_000);
});
