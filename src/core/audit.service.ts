import type { CryptoKey, JWK } from 'jose';
import { ChainVerifier, signCheckpoint, type BrokenLink } from '../data/audit-chain.js';
import { AppError } from './errors.js';
import { auditBundle, toAuditEvent, type ParticipantKind } from './audit-fhir.js';
import type { UserRepository } from '../data/repositories/user.repository.js';
import { Types } from 'mongoose';
import type {
  AuditRepository,
  AuditEntry,
  AuditRecord,
  AuditFilter,
  AuditCheckpointRecord,
} from '../data/repositories/audit.repository.js';

export type { AuditEntry, AuditRecord, AuditFilter, BrokenLink, AuditCheckpointRecord };

/** The service's signing keys, as far as checkpoints need them (src/auth/signing-keys.ts). */
export interface CheckpointSigner {
  current(): Promise<{ kid: string; key: CryptoKey }>;
  jwks(): Promise<{ keys: JWK[] }>;
}

/** Format name and version of an export (docs/audit.md). */
export const EXPORT_FORMAT = { format: 'consult-audit-export', version: 1 } as const;

/** One line of an ndjson export. */
export type ExportLine =
  | { type: 'header'; format: string; version: number; tenant: string; exportedAt: string; canonicalization: string }
  | ({ type: 'entry' } & Omit<AuditRecord, 'createdAt'> & { createdAt: string })
  | ({ type: 'checkpoint' } & Omit<AuditCheckpointRecord, 'createdAt'> & { createdAt: string });

/** What a verification of a tenant's chain found. */
export interface ChainReport {
  tenant: string;
  ok: boolean;
  /** Entries whose links and hashes checked out, from seq 1. */
  verified: number;
  /** The last verified position and its hash. */
  head: { seq: number; hash: string };
  /** The first position that does not verify, and why. */
  firstBroken?: BrokenLink;
}

/** Entries read per round trip while verifying or exporting. */
const BATCH = 500;

/**
 * Audit actions. Security: sign-in and sessions, impersonation, PINs, offline tokens, roles. Clinical:
 * consultations, meetings, recordings, media, devices, imports, tenant configuration. Other capabilities
 * add their own names in the same `area.verb` shape (docs/audit.md lists them).
 */
export type AuditAction =
  | 'signin.success'
  | 'signin.failure'
  | 'signin.lockout'
  | 'logout'
  | 'session.reuse_detected'
  | 'impersonation.start'
  | 'impersonation.end'
  | 'impersonation.request'
  | 'pin.reset'
  | 'pin.set'
  | 'offline_token.issue'
  | 'offline_token.revoke'
  | 'login_code.approve'
  | 'login_code.refuse'
  | 'role.assign'
  | (string & {});

/**
 * Writes and reads the tenant's tamper-evident audit trail (decision 880). `record` is awaited by the
 * callers so an action is never unrecorded; it costs one insert when this process knows the chain's head.
 */
export class AuditService {
  constructor(
    private readonly deps: {
      audits(tenant: string): AuditRepository;
      /** Who is behind a user id, for the FHIR references (Practitioner, Patient or Device). */
      users?(tenant: string): Pick<UserRepository, 'findByIds'>;
      signer?: CheckpointSigner;
    },
  ) {}

  /** Appends one entry to the tenant's chain and returns it with its position and hash. */
  record(tenant: string, entry: AuditEntry & { action: AuditAction }): Promise<AuditRecord> {
    return this.deps.audits(tenant).append(entry);
  }

  /** Newest first, filtered (action, actor, subject, event, time range), paged by `beforeSeq`. */
  list(tenant: string, filter: AuditFilter, limit?: number): Promise<AuditRecord[]> {
    return this.deps.audits(tenant).list(filter, limit);
  }

  /** Every entry of the chain in order, read BATCH at a time. */
  async *entries(tenant: string, afterSeq = 0): AsyncGenerator<AuditRecord> {
    const repo = this.deps.audits(tenant);
    for (let after = afterSeq; ;) {
      const batch = await repo.range(after, BATCH);
      yield* batch;
      if (batch.length < BATCH) return;
      after = batch[batch.length - 1]!.seq;
    }
  }

  /**
   * Re-computes every link of the tenant's chain from the first entry: positions without gaps, each
   * `prev` the hash of the entry before, each hash that of the entry's canonical encoding. Reports the
   * first position that fails.
   */
  async verify(tenant: string): Promise<ChainReport> {
    const v = new ChainVerifier(tenant);
    for await (const e of this.entries(tenant)) if (!v.push(e)) break;
    return {
      tenant,
      ok: !v.firstBroken,
      verified: v.checked,
      head: v.head,
      ...(v.firstBroken ? { firstBroken: v.firstBroken } : {}),
    };
  }

  /**
   * Signs the chain's head with the service's signing key (decision 881), after verifying the entries
   * since the last checkpoint link up to it; a head signed already is returned as it was. Null for an
   * empty trail; `audit_chain_broken` when the links since the last checkpoint do not verify.
   */
  async checkpoint(tenant: string): Promise<AuditCheckpointRecord | null> {
    const signer = this.deps.signer;
    if (!signer) throw new AppError('service_unavailable', 'No signing key is configured for checkpoints');
    const repo = this.deps.audits(tenant);
    const [last] = await repo.checkpoints(1);
    const v = new ChainVerifier(tenant, last ? { seq: last.seq, hash: last.hash } : undefined);
    for await (const e of this.entries(tenant, last?.seq ?? 0)) if (!v.push(e)) break;
    if (v.firstBroken)
      throw new AppError(
        'audit_chain_broken',
        `The audit chain breaks at position ${v.firstBroken.seq} (${v.firstBroken.reason}); nothing was signed`,
      );
    const head = v.head;
    if (head.seq === 0) return null;
    if (last && last.seq === head.seq) return last;
    const key = await signer.current();
    const createdAt = new Date();
    const jws = await signCheckpoint(
      { tenant, seq: head.seq, hash: head.hash, createdAt: createdAt.toISOString() },
      key,
    );
    const jwk = (await signer.jwks()).keys.find((k) => k.kid === key.kid);
    if (!jwk) throw new AppError('service_unavailable', 'The signing key has no public key to publish');
    return repo.saveCheckpoint({ seq: head.seq, hash: head.hash, createdAt, kid: key.kid, jws, jwk });
  }

  /** Checkpoints newest first. */
  checkpoints(tenant: string, limit = 100): Promise<AuditCheckpointRecord[]> {
    return this.deps.audits(tenant).checkpoints(limit);
  }

  /**
   * The trail as ndjson lines for an auditor (docs/audit.md): a header, every entry in chain order, then
   * every checkpoint (oldest first) with the public key that verifies it.
   */
  async *exportLines(tenant: string): AsyncGenerator<ExportLine> {
    yield {
      type: 'header',
      ...EXPORT_FORMAT,
      tenant,
      exportedAt: new Date().toISOString(),
      canonicalization: 'RFC 8785 (JCS), SHA-256',
    };
    for await (const e of this.entries(tenant)) yield { type: 'entry', ...e, createdAt: e.createdAt.toISOString() };
    const checkpoints = await this.deps.audits(tenant).checkpoints(500);
    for (const c of checkpoints.reverse()) yield { type: 'checkpoint', ...c, createdAt: c.createdAt.toISOString() };
  }

  /** Entries (newest first, filtered like `list`) as a FHIR R4 Bundle of AuditEvents. */
  async fhirBundle(tenant: string, filter: AuditFilter, limit?: number): Promise<Record<string, unknown>> {
    const entries = await this.list(tenant, filter, limit);
    const kindOf = await this.participantKinds(tenant, entries);
    return auditBundle(entries.map((e) => toAuditEvent(tenant, e, kindOf)));
  }

  /** The whole trail in chain order as FHIR AuditEvents, one resource per line (bulk export, ndjson). */
  async *fhirLines(tenant: string): AsyncGenerator<Record<string, unknown>> {
    let batch: AuditRecord[] = [];
    const flush = async function* (this: AuditService) {
      const kindOf = await this.participantKinds(tenant, batch);
      for (const e of batch) yield toAuditEvent(tenant, e, kindOf);
      batch = [];
    };
    for await (const e of this.entries(tenant)) {
      batch.push(e);
      if (batch.length >= BATCH) yield* flush.call(this);
    }
    yield* flush.call(this);
  }

  /** Kinds of the users an entry names: devices are Device, patients Patient, every other role Practitioner. */
  private async participantKinds(tenant: string, entries: AuditRecord[]): Promise<(id: string) => ParticipantKind> {
    const ids = new Set(entries.flatMap((e) => [e.actorId, e.subjectId]).filter((v): v is string => !!v));
    const valid = [...ids].filter((id) => Types.ObjectId.isValid(id) && /^[a-f0-9]{24}$/i.test(id));
    const users =
      valid.length && this.deps.users
        ? await this.deps.users(tenant).findByIds(valid.map((id) => new Types.ObjectId(id)))
        : [];
    const kinds = new Map<string, ParticipantKind>(
      users.map((u) => [
        String(u._id),
        u.kind === 'device' ? 'Device' : u.role === 'patient' ? 'Patient' : 'Practitioner',
      ]),
    );
    return (id) => kinds.get(id) ?? 'Practitioner';
  }
}
