/**
 * A separate process appending to one tenant's audit trail through the product's repository, as a
 * service node does: its own MongoDB connection pool. Prints `ready`, waits for `go` on stdin (so every
 * writer starts at once), appends AUDIT_COUNT entries AUDIT_CONCURRENCY at a time, prints the ids it
 * appended as one JSON line and exits. Each of its AUDIT_CONCURRENCY lanes has its own head cache and
 * append queue (AuditHeads), as a node of its own would: a node has one insert of a chain in flight at a
 * time (decisions 880, 1107), so lanes sharing one queue would not race at all.
 */
import { createInterface } from 'node:readline';
import { Mongo } from '../../src/data/mongo.js';
import { AuditHeads, AuditRepository } from '../../src/data/repositories/audit.repository.js';
import { AuditService } from '../../src/core/audit/audit.service.js';

const env = process.env;
const mongo = await Mongo.connect({
  uri: env.MONGODB_URI!,
  catalogDb: env.MONGODB_CATALOG_DB!,
  tenantDbPrefix: env.MONGODB_TENANT_DB_PREFIX!,
  timeoutMs: 10_000,
});
const lane = () => {
  const heads = new AuditHeads();
  return new AuditService({ audits: (t) => new AuditRepository(mongo.tenantDb(t), heads) });
};
const tenant = env.AUDIT_TENANT!;
const count = Number(env.AUDIT_COUNT);
const concurrency = Number(env.AUDIT_CONCURRENCY);
const writer = env.AUDIT_WRITER!;

process.stdout.write('ready\n');
const stdin = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => stdin.once('line', () => resolve()));
stdin.close();
process.stdin.destroy();

let next = 0;
const ids: string[] = [];
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    const audit = lane();
    while (next < count) {
      const n = next++;
      const e = await audit.record(tenant, {
        action: 'test.append',
        outcome: 'success',
        details: { writer, n, pid: process.pid },
      });
      ids.push(e.id);
    }
  }),
);
process.stdout.write(JSON.stringify({ writer, ids }) + '\n');
await mongo.close();
