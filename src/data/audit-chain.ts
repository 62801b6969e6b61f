import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** The `prev` of a tenant's first entry: no entry came before it. */
export const GENESIS_HASH = '0'.repeat(64);

/** Version of the hashed encoding, part of every hash so a later encoding cannot be confused with it. */
export const CHAIN_VERSION = 1;

/** What an audit entry says, before it has a place in the chain. */
export interface AuditFacts {
  action: string;
  outcome: 'success' | 'failure';
  /** Who acted (a user id; the impersonator while impersonating). */
  actorId?: string;
  /** Whom or what the action was about (a user id). */
  subjectId?: string;
  /** The consultation (event) the action belongs to. */
  eventId?: string;
  ip?: string;
  details?: Record<string, unknown>;
}

/** An entry with its place in the tenant's chain: what is stored, exported and verified. */
export interface ChainedEntry extends AuditFacts {
  /** Position in the tenant's chain, 1, 2, 3... without gaps. */
  seq: number;
  /** Unique id of the entry (also the FHIR AuditEvent id). */
  id: string;
  createdAt: Date;
  /** Hash of the entry at seq - 1 (GENESIS_HASH for seq 1). */
  prev: string;
  /** SHA-256 (hex) of the entry's canonical encoding, `prev` included. */
  hash: string;
}

/**
 * Details in the form they survive a round trip through the database and JSON unchanged: ids and dates
 * as strings, strings well-formed (a lone surrogate would be stored as U+FFFD and break the hash).
 */
export function normaliseDetails(details: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!details) return undefined;
  const text = JSON.stringify(details, (_k, v: unknown) => (typeof v === 'string' ? wellFormed(v) : v));
  return JSON.parse(text) as Record<string, unknown>;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The string as UTF-8 stores it: a lone surrogate becomes U+FFFD. */
export function wellFormed(s: string): string {
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

/** The exact bytes an entry's hash covers: RFC 8785 (JCS) canonical JSON of its fields and its tenant. */
export function canonicalEncoding(tenant: string, e: Omit<ChainedEntry, 'hash'>): string {
  const fields: Record<string, unknown> = {
    v: CHAIN_VERSION,
    tenant,
    seq: e.seq,
    id: e.id,
    createdAt: e.createdAt.toISOString(),
    prev: e.prev,
    action: e.action,
    outcome: e.outcome,
  };
  for (const k of ['actorId', 'subjectId', 'eventId', 'ip'] as const) if (e[k] !== undefined) fields[k] = e[k];
  if (e.details !== undefined) fields.details = e.details;
  return canonicalize(fields) as string;
}

export function entryHash(tenant: string, e: Omit<ChainedEntry, 'hash'>): string {
  return createHash('sha256').update(canonicalEncoding(tenant, e), 'utf8').digest('hex');
}

/** Seals facts at a chain position: the entry as it must be stored. */
export function sealEntry(
  tenant: string,
  facts: AuditFacts,
  at: { seq: number; prev: string; id: string; createdAt: Date },
): ChainedEntry {
  const base: Omit<ChainedEntry, 'hash'> = { ...definedFacts(facts), ...at };
  return { ...base, hash: entryHash(tenant, base) };
}

function definedFacts(f: AuditFacts): AuditFacts {
  const out: AuditFacts = { action: wellFormed(f.action), outcome: f.outcome };
  for (const k of ['actorId', 'subjectId', 'eventId', 'ip'] as const)
    if (f[k] !== undefined && f[k] !== null) out[k] = wellFormed(String(f[k]));
  const details = normaliseDetails(f.details);
  if (details !== undefined) out.details = details;
  return out;
}

/**
 * Why a chain position does not verify: the links (`gap`, `prev_mismatch`, `hash_mismatch`), or the
 * signatures (decision 1020): `missing` (a signed entry is absent), `not_signed` (the entry is not the one
 * a checkpoint signed), `checkpoint_invalid` (a checkpoint covering it does not verify or does not
 * follow the one before), `unsigned` (no trusted checkpoint covers it).
 */
export type BrokenReason =
  'gap' | 'prev_mismatch' | 'hash_mismatch' | 'missing' | 'not_signed' | 'checkpoint_invalid' | 'unsigned';

export interface BrokenLink {
  seq: number;
  reason: BrokenReason;
  expected: string;
  found: string;
}

/**
 * Checks entries read in ascending `seq` order, one at a time, keeping only the last hash: feed it
 * the whole trail (or a range, starting from the hash before it) and read `firstBroken`.
 */
export class ChainVerifier {
  private expectedSeq: number;
  private lastHash: string;
  firstBroken: BrokenLink | undefined;
  checked = 0;

  constructor(
    private readonly tenant: string,
    from: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH },
  ) {
    this.expectedSeq = from.seq + 1;
    this.lastHash = from.hash;
  }

  /** Checks the next entry; false once a link is broken (later entries are not checked). */
  push(e: ChainedEntry): boolean {
    if (this.firstBroken) return false;
    const broken = this.check(e);
    if (broken) {
      this.firstBroken = broken;
      return false;
    }
    this.checked++;
    this.expectedSeq = e.seq + 1;
    this.lastHash = e.hash;
    return true;
  }

  /** The verified head so far. */
  get head(): { seq: number; hash: string } {
    return { seq: this.expectedSeq - 1, hash: this.lastHash };
  }

  private check(e: ChainedEntry): BrokenLink | undefined {
    if (e.seq !== this.expectedSeq)
      return { seq: this.expectedSeq, reason: 'gap', expected: String(this.expectedSeq), found: String(e.seq) };
    if (e.prev !== this.lastHash)
      return { seq: e.seq, reason: 'prev_mismatch', expected: this.lastHash, found: e.prev };
    const { hash, ...rest } = e;
    const computed = entryHash(this.tenant, rest);
    if (computed !== hash) return { seq: e.seq, reason: 'hash_mismatch', expected: computed, found: hash };
    return undefined;
  }
}
