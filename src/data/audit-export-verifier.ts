import { calculateJwkThumbprint, type JWK } from 'jose';
import type { ChainedEntry } from './audit-chain.js';
import { openStatement, type SealStatement } from './audit-checkpoint.js';
import { TrailVerifier, type CheckpointCheck, type TrailReport } from './audit-trail-verifier.js';

/** The export format this verifier reads (docs/audit.md). */
const FORMAT = 'consult-audit-export';
const VERSION = 2;

/** What an offline verification of an export found (docs/audit.md). */
export interface ExportReport extends TrailReport {
  tenant?: string;
  /** Each checkpoint: its signature, its key and its link to the one before. */
  checkpoints: CheckpointCheck[];
  /** The file itself is not an export this verifier reads. */
  error?: string;
}

/**
 * Verifies an ndjson export line by line with no database and no network (decision 1020): the seal
 * (second line) must be signed by one of the `trusted` keys (the service's published JWKS, fetched by
 * the auditor the day of the export) over the export's last entry and last checkpoint; each checkpoint
 * must verify with the key it names and follow the one before; every entry must link, hash and match
 * the hash its checkpoint signed. The report names the first entry that fails.
 */
export async function verifyExport(
  lines: AsyncIterable<string> | Iterable<string>,
  trusted: JWK[],
): Promise<ExportReport> {
  let v: TrailVerifier | undefined;
  let tenant: string | undefined;
  let n = 0;
  const fail = (error: string): ExportReport => ({
    ok: false,
    tenant,
    verified: 0,
    covered: 0,
    head: { seq: 0, hash: '' },
    checkpoints: [],
    message: error,
    error,
  });
  const trustedPrints = new Set(await Promise.all(trusted.map((k) => calculateJwkThumbprint(k))));
  for await (const raw of lines) {
    if (!raw.trim()) continue;
    n++;
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return fail(`line ${n} is not JSON`);
    }
    if (line.type === 'header') {
      if (n !== 1) return fail('the header is not the first line');
      if (line.format !== FORMAT || line.version !== VERSION)
        return fail(`not a ${FORMAT} of version ${VERSION} (found ${String(line.format)} ${String(line.version)})`);
      tenant = String(line.tenant);
      v = new TrailVerifier(tenant, trusted);
      v.distrust('the export carries no seal signed at export time');
    } else if (!v || !tenant) return fail('the export has no header line first');
    else if (line.type === 'seal') {
      if (n !== 2) return fail('the seal is not the line after the header');
      const why = await sealProblem(line as { jws: string; jwk: JWK }, tenant, trustedPrints);
      if (typeof why === 'string') v.distrust(why);
      else v.trust({ seq: why.seq, hash: why.hash, checkpoint: why.checkpoint, name: 'the seal' });
    } else if (line.type === 'checkpoint') await v.checkpoint(line as { jws: string; jwk: JWK; kid?: string });
    else if (line.type === 'entry') {
      const { type: _type, ...rest } = line;
      v.entry({ ...rest, createdAt: new Date(String(rest.createdAt)) } as unknown as ChainedEntry);
    } else return fail(`line ${n} has an unknown type ${JSON.stringify(line.type)}`);
  }
  if (!v) return fail('the export has no header line');
  return { ...v.finish(), tenant, checkpoints: v.checkpoints };
}

/** The seal's statement when it verifies with a trusted key, else why not. */
async function sealProblem(
  line: { jws: string; jwk: JWK },
  tenant: string,
  trusted: Set<string>,
): Promise<SealStatement | string> {
  try {
    const { statement } = await openStatement<SealStatement>(line.jws, line.jwk, 'audit-export');
    if (!trusted.has(await calculateJwkThumbprint(line.jwk)))
      return 'the seal is signed by a key not in the trusted set';
    if (statement.tenant !== tenant) return 'the seal was signed for another tenant';
    return statement;
  } catch (e) {
    return `the seal does not verify: ${(e as Error).message}`;
  }
}
