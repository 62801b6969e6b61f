import { calculateJwkThumbprint, type JWK } from 'jose';
import { ChainVerifier, verifyCheckpoint, type BrokenLink, type ChainedEntry } from './audit-chain.js';

/** What an offline verification of an export found (docs/audit.md). */
export interface ExportReport {
  ok: boolean;
  tenant?: string;
  /** Entries whose links and hashes verified, from position 1. */
  verified: number;
  head: { seq: number; hash: string };
  firstBroken?: BrokenLink;
  /** Checkpoints whose signature verified and whose head is the entry the chain has at that position. */
  checkpoints: { seq: number; kid: string; createdAt: string; ok: boolean; error?: string }[];
  error?: string;
}

/**
 * Verifies an ndjson export line by line with no database and no network: the chain from position 1
 * (gaps, `prev` links, hashes over the canonical encoding), then each checkpoint's signature with its
 * public key and its head against the chain. With `trusted` keys (the service's published JWKS, kept
 * by the auditor) a checkpoint signed by any other key fails.
 */
export async function verifyExport(
  lines: AsyncIterable<string> | Iterable<string>,
  trusted?: JWK[],
): Promise<ExportReport> {
  let verifier: ChainVerifier | undefined;
  let tenant: string | undefined;
  const hashes = new Map<number, string>();
  const pending: { seq: number; hash: string; kid: string; jws: string; jwk: JWK; createdAt: string }[] = [];
  const fail = (error: string): ExportReport => ({
    ok: false,
    tenant,
    verified: verifier?.checked ?? 0,
    head: verifier?.head ?? { seq: 0, hash: '' },
    checkpoints: [],
    error,
  });
  for await (const raw of lines) {
    if (!raw.trim()) continue;
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return fail('a line is not JSON');
    }
    if (line.type === 'header') {
      tenant = String(line.tenant);
      verifier = new ChainVerifier(tenant);
    } else if (line.type === 'entry') {
      if (!verifier) return fail('the export has no header line first');
      const { type: _type, ...rest } = line;
      const entry = { ...rest, createdAt: new Date(String(rest.createdAt)) } as unknown as ChainedEntry;
      if (verifier.push(entry)) hashes.set(entry.seq, entry.hash);
    } else if (line.type === 'checkpoint') pending.push(line as never);
    else return fail(`unknown line type ${JSON.stringify(line.type)}`);
  }
  if (!verifier || !tenant) return fail('the export has no header line');
  const trustedPrints = trusted ? new Set(await Promise.all(trusted.map((k) => calculateJwkThumbprint(k)))) : undefined;
  const checkpoints = await Promise.all(
    pending.map(async (c) => {
      const base = { seq: c.seq, kid: c.kid, createdAt: c.createdAt };
      try {
        if (trustedPrints && !trustedPrints.has(await calculateJwkThumbprint(c.jwk)))
          return { ...base, ok: false, error: 'signed by a key that is not in the trusted set' };
        const s = await verifyCheckpoint(c.jws, c.jwk);
        if (s.tenant !== tenant) return { ...base, ok: false, error: 'signed for another tenant' };
        if (s.seq !== c.seq || s.hash !== c.hash)
          return { ...base, ok: false, error: 'statement differs from the line' };
        if (hashes.get(s.seq) !== s.hash)
          return { ...base, ok: false, error: `the chain's entry ${s.seq} is not the one signed` };
        return { ...base, ok: true };
      } catch (e) {
        return { ...base, ok: false, error: (e as Error).message };
      }
    }),
  );
  return {
    ok: !verifier.firstBroken && checkpoints.every((c) => c.ok),
    tenant,
    verified: verifier.checked,
    head: verifier.head,
    ...(verifier.firstBroken ? { firstBroken: verifier.firstBroken } : {}),
    checkpoints,
  };
}
