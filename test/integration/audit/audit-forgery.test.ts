import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import canonicalize from 'canonicalize';
import { CompactSign, calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { testEnv } from '../../support/env.js';
import { startTestNode, type TestNode } from '../../support/node.js';
import { verifyExport } from '../../../src/data/audit-export-verifier.js';

const run = promisify(execFile);
/** A CLI run starts a TypeScript process: seconds, much more on a loaded machine. */
const CLI_MS = 300_000;
/** Entries each tenant's trail holds before tampering (besides `tenant.create`). */
const ENTRIES = 30;

type Line = Record<string, unknown> & { type: string };
type Entry = Line & { seq: number; prev: string; hash: string };

/**
 * The recipe docs/audit.md publishes for an entry's hash, applied as a forger would: plain SHA-256 over
 * the RFC 8785 encoding of the entry's fields, with no key.
 */
function plainHash(tenant: string, e: Record<string, unknown>): string {
  const fields: Record<string, unknown> = { v: 1, tenant };
  for (const k of ['seq', 'id', 'createdAt', 'prev', 'action', 'outcome'])
    fields[k] = k === 'createdAt' ? new Date(e[k] as string | Date).toISOString() : e[k];
  for (const k of ['actorId', 'subjectId', 'eventId', 'ip', 'details']) if (e[k] !== undefined) fields[k] = e[k];
  return createHash('sha256')
    .update(canonicalize(fields) as string)
    .digest('hex');
}

/** Renumbers entries from `first` on without gaps, each linked to the one before and re-hashed. */
function reseal<T extends Entry>(tenant: string, entries: T[], first: number, prev: string): T[] {
  return entries.map((e, i) => {
    const out = { ...e, seq: first + i, prev };
    out.hash = plainHash(tenant, out);
    prev = out.hash;
    return out;
  });
}

/**
 * The reviewer's forgery of an export: entry `drop` deleted, every later entry re-numbered and
 * re-sealed, and (unless `keepSigned`) every line that is not the header or an entry dropped.
 */
function forgeExport(tenant: string, lines: string[], drop: number, keepSigned = false): string[] {
  const parsed = lines.map((l) => JSON.parse(l) as Line);
  const entries = parsed.filter((l): l is Entry => l.type === 'entry');
  const before = entries.filter((e) => e.seq < drop);
  const resealed = reseal(
    tenant,
    entries.filter((e) => e.seq > drop),
    drop,
    before[before.length - 1]!.hash,
  );
  const bySeq = new Map(resealed.map((e) => [e.seq + 1, e]));
  const out: string[] = [];
  for (const l of parsed) {
    if (l.type === 'entry') {
      const e = l as Entry;
      if (e.seq < drop) out.push(JSON.stringify(e));
      else if (bySeq.has(e.seq)) out.push(JSON.stringify(bySeq.get(e.seq)));
    } else if (l.type === 'header' || keepSigned) out.push(JSON.stringify(l));
  }
  return out;
}

describe('audit trail: forgeries of the export and of the collection fail verification', () => {
  const env = testEnv();
  let node: TestNode;
  let trusted: JWK[];
  let n = 0;
  const db = (tenant: string) => node.infra.mongo.tenantDb(tenant).models;

  const exported = async (tenant: string) => {
    const lines: string[] = [];
    for await (const l of node.services.auth.audit.exportLines(tenant)) lines.push(JSON.stringify(l));
    return lines;
  };
  /** A tenant of its own with ENTRIES entries after `tenant.create`; returns its name and head. */
  async function trail(): Promise<{ tenant: string; head: number }> {
    const tenant = `forge${++n}`;
    await node.services.tenants.create({ name: tenant, displayName: 'Forgery Clinic' });
    for (let i = 0; i < ENTRIES; i++)
      await node.services.auth.audit.record(tenant, {
        action: 'test.step',
        outcome: 'success',
        actorId: 'aaaaaaaaaaaaaaaaaaaaaaaa',
        details: { i },
      });
    return { tenant, head: await db(tenant).Audit.collection.countDocuments() };
  }

  /** The reviewer's forgery done on the collection: entry `drop` deleted, later entries re-numbered and re-sealed, checkpoints dropped. */
  async function forgeCollection(tenant: string, drop: number): Promise<void> {
    const col = db(tenant).Audit.collection;
    const later = (await col
      .find({ _id: { $gt: drop } } as never)
      .sort({ _id: 1 })
      .toArray()) as unknown as (Entry & { _id: number })[];
    const before = (await col.findOne({ _id: drop - 1 } as never)) as unknown as Entry;
    await col.deleteMany({ _id: { $gte: drop } } as never);
    const asEntries = later.map(({ _id, ...rest }) => ({ ...rest, seq: _id }) as Entry);
    for (const { seq, ...rest } of reseal(tenant, asEntries, drop, before.hash))
      await col.insertOne({ _id: seq, ...rest } as never);
    await db(tenant).AuditCheckpoint.collection.deleteMany({});
  }

  beforeAll(async () => {
    node = await startTestNode({
      MONGODB_CATALOG_DB: env.MONGODB_CATALOG_DB!,
      MONGODB_TENANT_DB_PREFIX: env.MONGODB_TENANT_DB_PREFIX!,
      REDIS_PREFIX: env.REDIS_PREFIX!,
    });
    trusted = (await node.services.auth.signingKeys.jwks()).keys;
  });
  afterAll(async () => node.destroy());

  it(
    "the reviewer's forgery (entry deleted, chain re-sealed with plain SHA-256, checkpoints dropped) fails offline, with --jwks too",
    async () => {
      const { tenant, head } = await trail();
      const lines = await exported(tenant);
      const genuineReport = await verifyExport(lines, trusted);
      expect(genuineReport).toMatchObject({ ok: true, verified: head });

      const drop = 12;
      const forged = forgeExport(tenant, lines, drop);
      // The forgery is internally consistent: every link and hash re-computes.
      expect(forged.filter((l) => l.includes('"type":"entry"'))).toHaveLength(head - 1);
      const report = await verifyExport(forged, trusted);
      expect(report).toMatchObject({
        ok: false,
        verified: head - 1,
        covered: 0,
        firstBroken: { seq: 1, reason: 'unsigned' },
      });
      expect(report.message).toMatch(new RegExp(`entries 1-${head - 1} are not covered by a trusted checkpoint`));
      expect(genuineReport.covered).toBe(head);

      // The command an auditor runs says the same and exits 2; the genuine export passes it.
      const dir = mkdtempSync(path.join(tmpdir(), 'audit-forgery-'));
      const jwksFile = path.join(dir, 'jwks.json');
      writeFileSync(jwksFile, JSON.stringify({ keys: trusted }));
      const cli = async (file: string, lines: string[]) => {
        writeFileSync(path.join(dir, file), lines.join('\n') + '\n');
        return run(
          process.execPath,
          ['--import', 'tsx', 'src/cli/audit-verify.cli.ts', path.join(dir, file), '--jwks', jwksFile],
          { env: { ...process.env, ...env }, timeout: CLI_MS },
        ).then(
          (r) => ({ code: 0, stdout: r.stdout }),
          (e: { code?: number; stdout?: string }) => ({ code: e.code ?? -1, stdout: e.stdout ?? '' }),
        );
      };
      const genuine = await cli('genuine.ndjson', lines);
      expect(genuine.code).toBe(0);
      const offline = await cli('forged.ndjson', forged);
      expect(offline.code).toBe(2);
      expect(JSON.parse(offline.stdout)).toMatchObject({ ok: false, firstBroken: { seq: 1, reason: 'unsigned' } });
    },
    CLI_MS * 3,
  );

  it('the same forgery keeping the signed lines names exactly the entry that breaks the chain', async () => {
    const { tenant } = await trail();
    const lines = await exported(tenant);
    for (const drop of [2, 12, 25]) {
      const report = await verifyExport(forgeExport(tenant, lines, drop, true), trusted);
      expect(report).toMatchObject({ ok: false, firstBroken: { seq: drop, reason: 'not_signed' } });
      expect(report.message).toMatch(new RegExp(`^entry ${drop} is not the entry checkpoint \\d+ signed`));
    }
  });

  it('online: the same forgery done on the collection fails verify, naming the entry, and is never signed', async () => {
    const { tenant, head } = await trail();
    const audit = node.services.auth.audit;
    const clean = await audit.verify(tenant);
    expect(clean).toMatchObject({ ok: true, verified: head });
    const drop = 12;
    await forgeCollection(tenant, drop);
    // The links re-compute: only the signed checkpoint tells.
    const report = await audit.verify(tenant);
    expect(report).toMatchObject({ ok: false, firstBroken: { seq: drop, reason: 'not_signed' } });
    expect(report.message).toMatch(new RegExp(`^entry ${drop} is not the entry checkpoint ${head} signed`));
    await expect(audit.checkpoint(tenant)).rejects.toMatchObject({ code: 'audit_chain_broken' });
    // Verifying again (the refused checkpoint changed nothing) says the same.
    expect((await audit.verify(tenant)).firstBroken).toEqual(report.firstBroken);
    expect(clean.covered).toBe(head);
  });

  it('a checkpoint whose signature is wrong, or signed by a key it does not name, fails', async () => {
    const { tenant, head } = await trail();
    const lines = await exported(tenant);
    const at = lines.findIndex((l) => l.includes('"type":"checkpoint"'));
    expect(at).toBeGreaterThan(0);
    const cp = JSON.parse(lines[at]!) as Line & { jws: string; jwk: JWK; kid: string };

    // One bit of the signature changed.
    const [h, p, s] = cp.jws.split('.');
    const flipped = `${h}.${p}.${s![0] === 'A' ? 'B' : 'A'}${s!.slice(1)}`;
    const badSig = lines.map((l, i) => (i === at ? JSON.stringify({ ...cp, jws: flipped }) : l));
    const r1 = await verifyExport(badSig, trusted);
    expect(r1).toMatchObject({ ok: false, firstBroken: { seq: 1, reason: 'checkpoint_invalid' } });
    expect(r1.checkpoints.find((c) => c.seq === cp.seq)).toMatchObject({ ok: false });

    // The same statement signed again by another key, which the line carries.
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const payload = Buffer.from(p!, 'base64url');
    const resigned = await new CompactSign(payload)
      .setProtectedHeader({ alg: 'ES256', kid: 'forger', typ: 'audit-checkpoint+jws' })
      .sign(privateKey);
    const otherKey = { ...(await exportJWK(publicKey)), kid: 'forger' };
    const unknown = lines.map((l, i) =>
      i === at ? JSON.stringify({ ...cp, jws: resigned, jwk: otherKey, kid: 'forger' }) : l,
    );
    const r2 = await verifyExport(unknown, trusted);
    expect(r2).toMatchObject({ ok: false, firstBroken: { seq: 1, reason: 'checkpoint_invalid' } });
    expect(r2.checkpoints.find((c) => c.seq === cp.seq)?.error).toMatch(/key/);

    // The export's seal made again by the forger, naming and signed by a key the auditor does not trust.
    const sealAt = lines.findIndex((l) => l.includes('"type":"seal"'));
    const seal = JSON.parse(lines[sealAt]!) as Line & { jws: string };
    const statement = JSON.parse(Buffer.from(seal.jws.split('.')[1]!, 'base64url').toString('utf8')) as Line;
    const sealPayload = new TextEncoder().encode(
      canonicalize({ ...statement, key: await calculateJwkThumbprint(otherKey) }) as string,
    );
    const forgedSeal = await new CompactSign(sealPayload)
      .setProtectedHeader({ alg: 'ES256', kid: 'forger', typ: 'audit-export+jws' })
      .sign(privateKey);
    const r3 = await verifyExport(
      lines.map((l, i) =>
        i === sealAt ? JSON.stringify({ ...seal, jws: forgedSeal, jwk: otherKey, kid: 'forger' }) : l,
      ),
      trusted,
    );
    expect(r3).toMatchObject({ ok: false, firstBroken: { seq: 1, reason: 'unsigned' } });
    expect(r3.message).toMatch(/not in the trusted set/);
    // Without trusted keys nothing is trusted.
    expect(await verifyExport(lines, [])).toMatchObject({ ok: false, firstBroken: { seq: 1, reason: 'unsigned' } });
    expect((await verifyExport(lines, trusted)).ok).toBe(true);
    expect(head).toBeGreaterThan(ENTRIES);
  });

  it('a head beyond the trusted checkpoint, and a cut tail, are named', async () => {
    const { tenant, head } = await trail();
    const lines = await exported(tenant);
    const entries = lines.map((l) => JSON.parse(l) as Line).filter((l): l is Entry => l.type === 'entry');
    const last = entries[entries.length - 1]!;

    // Entries appended to the export after its seal, linked and hashed correctly.
    const extra = reseal(
      tenant,
      [
        { ...last, id: 'x1' },
        { ...last, id: 'x2' },
      ],
      head + 1,
      last.hash,
    );
    const extended = await verifyExport([...lines, ...extra.map((e) => JSON.stringify(e))], trusted);
    expect(extended).toMatchObject({ ok: false, covered: head, firstBroken: { seq: head + 1, reason: 'unsigned' } });
    expect(extended.message).toMatch(new RegExp(`entries ${head + 1}-${head + 2} are not covered`));

    // The last three entries cut from the export.
    const cut = lines.filter((l) => {
      const e = JSON.parse(l) as Line;
      return e.type !== 'entry' || (e as Entry).seq <= head - 3;
    });
    const truncated = await verifyExport(cut, trusted);
    expect(truncated).toMatchObject({ ok: false, firstBroken: { seq: head - 2, reason: 'missing' } });
    expect(truncated.message).toMatch(new RegExp(`^entry ${head - 2} is missing`));
  });

  it('online: a cut tail is named once a checkpoint signed it; entries written after the last signature are not protected', async () => {
    const { tenant, head } = await trail();
    const audit = node.services.auth.audit;
    const col = db(tenant).Audit.collection;
    // Signed (every export signs the head), then the last three entries deleted.
    await exported(tenant);
    await col.deleteMany({ _id: { $gt: head - 3 } } as never);
    const cut = await audit.verify(tenant);
    expect(cut).toMatchObject({ ok: false, firstBroken: { seq: head - 2, reason: 'missing' } });
    expect(cut.message).toMatch(new RegExp(`^entry ${head - 2} is missing`));

    // The documented limit: entries appended after the last signature and removed before the next one.
    const { tenant: t2, head: h2 } = await trail();
    await exported(t2);
    await audit.record(t2, { action: 'test.late', outcome: 'success' });
    await db(t2).Audit.collection.deleteMany({ _id: { $gt: h2 } } as never);
    expect(await audit.verify(t2)).toMatchObject({ ok: true, verified: h2, covered: h2 });
  });
});
