import type { CryptoKey, JWK } from 'jose';
import { ChainVerifier, GENESIS_HASH, type BrokenLink, type ChainedEntry } from '../../data/audit-chain.js';
import {
  CHECKPOINT_MAX_ENTRIES,
  GENESIS,
  openStatement,
  signStatement,
  type AnyCheckpointStatement,
  type CheckpointStatement,
  type SealStatement,
  type StatementKey,
} from '../../data/audit-checkpoint.js';
import { TrailVerifier, type TrailReport } from '../../data/audit-trail-verifier.js';
import type { AuditAnchor, AuditAnchorStore } from '../../data/stores/audit-anchor.store.js';
import type { AuditCheckpointRecord, AuditRecord, AuditRepository } from '../../data/repositories/audit.repository.js';
import { AppError, isAppError } from '../../kernel/errors.js';

/** The service's signing keys, as far as checkpoints need them (src/auth/signing-keys.ts). */
export interface CheckpointSigner {
  current(): Promise<{ kid: string; key: CryptoKey }>;
  jwks(): Promise<{ keys: JWK[] }>;
}

/** Format name and version of an export (docs/audit.md). */
export const EXPORT_FORMAT = { format: 'consult-audit-export', version: 2 } as const;

/** One line of an ndjson export. */
export type ExportLine =
  | { type: 'header'; format: string; version: number; tenant: string; exportedAt: string; canonicalization: string }
  | { type: 'seal'; kid: string; jws: string; jwk: JWK }
  | ({ type: 'entry' } & Omit<AuditRecord, 'createdAt'> & { createdAt: string })
  | ({ type: 'checkpoint' } & Omit<AuditCheckpointRecord, 'createdAt'> & { createdAt: string });

/** What an online verification of a tenant's trail found (decision 1020). */
export interface ChainReport extends TrailReport {
  tenant: string;
  /** Checkpoints checked (signature, key, link to the one before). */
  checkpoints: number;
}

type TrailItem = { checkpoint: AuditCheckpointRecord } | { entry: AuditRecord };

/** Entries read per round trip while verifying, signing or exporting. */
const BATCH = 500;

/** Every entry after `afterSeq` in chain order, read BATCH at a time. */
export async function* chainEntries(repo: AuditRepository, afterSeq = 0): AsyncGenerator<AuditRecord> {
  for (let after = afterSeq; ;) {
    const batch = await repo.range(after, BATCH);
    yield* batch;
    if (batch.length < BATCH) return;
    after = batch[batch.length - 1]!.seq;
  }
}

const broken = (message: string) => new AppError('audit_chain_broken', `${message}; nothing was signed`);
const linkMessage = (b: BrokenLink) => `The audit chain breaks at entry ${b.seq} (${b.reason})`;

/**
 * Signs, verifies and exports a tenant's trail against its checkpoints (decisions 881, 1020). The last
 * checkpoint signed is also kept outside the database (the anchor): a new checkpoint follows it (the
 * entries after it must link to its head), verification ends at it, and someone who rewrites the trail
 * and drops the checkpoints in the database meets it.
 */
export class AuditSigning {
  constructor(
    private readonly deps: {
      audits(tenant: string): AuditRepository;
      signer: CheckpointSigner;
      anchors: Pick<AuditAnchorStore, 'get' | 'advance'>;
    },
  ) {}

  /**
   * Signs the entries written since the last checkpoint (at most CHECKPOINT_MAX_ENTRIES per checkpoint),
   * after checking that they link to its head; returns the last checkpoint (the one signed before when
   * nothing is new, null for an empty trail). `audit_chain_broken` when the entries do not link or the
   * signed head is gone or altered.
   */
  async checkpoint(tenant: string): Promise<AuditCheckpointRecord | null> {
    for (let attempt = 1; ; attempt++) {
      const r = await this.signNew(tenant);
      if (r !== 'raced') return r;
      if (attempt >= 5) throw new AppError('audit_busy', 'Other nodes keep signing this audit trail; try again');
    }
  }

  /**
   * Verifies the whole trail (decision 1020): signs what is new first (when it links), then every link
   * and hash from position 1, every checkpoint's signature and link, every entry against the hash its
   * checkpoint signed, and the end against the anchor. Names the first entry that fails.
   */
  async verify(tenant: string): Promise<ChainReport> {
    const refused = await this.checkpoint(tenant).then(
      () => false,
      (e: unknown) => {
        if (isAppError(e) && e.code === 'audit_chain_broken') return true;
        throw e;
      },
    );
    const anchor = await this.deps.anchors.get(tenant);
    const v = new TrailVerifier(tenant, (await this.deps.signer.jwks()).keys);
    if (anchor) v.trust({ seq: anchor.seq, hash: anchor.hash, checkpoint: anchor, name: `checkpoint ${anchor.seq}` });
    else v.distrust('no checkpoint has been signed');
    // A refused checkpoint: every entry is read, so the one that breaks is named.
    const upTo = refused || !anchor ? Infinity : anchor.seq;
    for await (const item of this.trail(tenant, anchor, upTo))
      if ('entry' in item) v.entry(item.entry);
      else await v.checkpoint(item.checkpoint);
    return { tenant, ...v.finish(), checkpoints: v.checkpoints.length };
  }

  /**
   * The trail as ndjson lines for an auditor (docs/audit.md): a header; the seal, signed now over the
   * export's last entry and its last checkpoint; then each checkpoint followed by the entries it signs,
   * and the entries after the last one. What is new is signed first; a trail that does not link is
   * exported as it is, for the verifier to name the break.
   */
  async *exportLines(tenant: string): AsyncGenerator<ExportLine> {
    await this.checkpoint(tenant).catch((e: unknown) => {
      if (!(isAppError(e) && e.code === 'audit_chain_broken')) throw e;
    });
    const anchor = await this.deps.anchors.get(tenant);
    const head = await this.deps.audits(tenant).head();
    const exportedAt = new Date().toISOString();
    const key = await this.key();
    const seal = await signStatement<SealStatement>(
      {
        typ: 'audit-export',
        v: 2,
        tenant,
        seq: head?.seq ?? 0,
        hash: head?.hash ?? GENESIS_HASH,
        checkpoint: { seq: anchor?.seq ?? 0, digest: anchor?.digest ?? GENESIS.digest },
        exportedAt,
      },
      key,
    );
    yield { type: 'header', ...EXPORT_FORMAT, tenant, exportedAt, canonicalization: 'RFC 8785 (JCS), SHA-256' };
    yield { type: 'seal', kid: key.kid, jws: seal.jws, jwk: key.jwk };
    for await (const item of this.trail(tenant, anchor, head?.seq ?? 0))
      yield 'entry' in item
        ? { type: 'entry', ...item.entry, createdAt: item.entry.createdAt.toISOString() }
        : { type: 'checkpoint', ...item.checkpoint, createdAt: item.checkpoint.createdAt.toISOString() };
  }

  /**
   * Checkpoints and entries in chain order, each checkpoint before the entries it covers: the stored
   * checkpoints before the anchor, the anchor itself (not the database's copy), then entries up to `upTo`.
   */
  private async *trail(tenant: string, anchor: AuditAnchor | undefined, upTo: number): AsyncGenerator<TrailItem> {
    const repo = this.deps.audits(tenant);
    const entries = chainEntries(repo);
    let pending: AuditRecord | undefined;
    let done = false;
    const until = async function* (to: number): AsyncGenerator<TrailItem> {
      for (;;) {
        if (!pending) {
          if (done) return;
          const n = await entries.next();
          if (n.done) return void (done = true);
          pending = n.value;
        }
        if (pending.seq > to) return;
        yield { entry: pending };
        pending = undefined;
      }
    };
    if (anchor) {
      for (let after = 0; ;) {
        const batch = (await repo.checkpointsAfter(after, 50)).filter((c) => c.seq < anchor.seq);
        for (const c of batch) {
          yield { checkpoint: c };
          yield* until(c.seq);
        }
        if (batch.length < 50) break;
        after = batch[batch.length - 1]!.seq;
      }
      yield { checkpoint: recordOf(anchor) };
      yield* until(anchor.seq);
    }
    yield* until(upTo);
    await entries.return(undefined);
  }

  private async signNew(tenant: string): Promise<AuditCheckpointRecord | null | 'raced'> {
    const repo = this.deps.audits(tenant);
    const anchor = (await this.deps.anchors.get(tenant)) ?? (await this.adopt(tenant, repo));
    const head = await repo.head();
    if (anchor && head && head.seq === anchor.seq && head.hash === anchor.hash) return recordOf(anchor);
    if (!head && !anchor) return null;
    if (anchor) {
      const signed = head && head.seq >= anchor.seq ? await repo.at(anchor.seq) : null;
      if (signed?.hash !== anchor.hash)
        throw broken(
          `The audit trail's entry ${anchor.seq}, signed by checkpoint ${anchor.seq}, is ${signed ? 'altered' : 'missing'}`,
        );
      // The database's copy of the last checkpoint, restored if it was lost (a crash after the anchor moved) or changed.
      if ((await repo.checkpointAt(anchor.seq))?.jws !== anchor.jws) await repo.putCheckpoint(recordOf(anchor));
    }
    const chain = new ChainVerifier(tenant, anchor ?? GENESIS);
    let last = anchor;
    let batch: ChainedEntry[] = [];
    let key: StatementKey | undefined;
    const flush = async (): Promise<boolean> => {
      key ??= await this.key();
      const next = await this.sign(tenant, last, batch, key);
      if (!(await this.deps.anchors.advance(tenant, last?.digest, next))) return false;
      await repo.putCheckpoint(recordOf(next));
      last = next;
      batch = [];
      return true;
    };
    for await (const e of chainEntries(repo, anchor?.seq ?? 0)) {
      if (!chain.push(e)) throw broken(linkMessage(chain.firstBroken!));
      batch.push(e);
      if (batch.length === CHECKPOINT_MAX_ENTRIES && !(await flush())) return 'raced';
    }
    if (batch.length && !(await flush())) return 'raced';
    return last ? recordOf(last) : null;
  }

  private async sign(
    tenant: string,
    after: AuditAnchor | undefined,
    entries: ChainedEntry[],
    key: StatementKey,
  ): Promise<AuditAnchor> {
    const head = entries[entries.length - 1]!;
    const createdAt = new Date().toISOString();
    const { jws, digest } = await signStatement<CheckpointStatement>(
      {
        typ: 'audit-checkpoint',
        v: 2,
        tenant,
        seq: head.seq,
        hash: head.hash,
        from: after?.seq ?? 0,
        prev: after?.digest ?? GENESIS.digest,
        entries: entries.map((e) => e.hash),
        createdAt,
      },
      key,
    );
    return { seq: head.seq, hash: head.hash, digest, jws, kid: key.kid, jwk: key.jwk, createdAt };
  }

  /**
   * No anchor (a new tenant, Redis emptied, or checkpoints from before decision 1020): the newest stored
   * checkpoint becomes it, if its signature verifies (trust on first use, docs/audit.md).
   */
  private async adopt(tenant: string, repo: AuditRepository): Promise<AuditAnchor | undefined> {
    const [last] = await repo.checkpoints(1);
    if (!last) return undefined;
    const { statement, digest } = await openStatement<AnyCheckpointStatement>(
      last.jws,
      last.jwk,
      'audit-checkpoint',
    ).catch((e: unknown) => {
      throw broken(`The last stored checkpoint (${last.seq}) does not verify: ${(e as Error).message}`);
    });
    const anchor: AuditAnchor = {
      seq: statement.seq,
      hash: statement.hash,
      digest,
      jws: last.jws,
      kid: last.kid,
      jwk: last.jwk as Record<string, unknown>,
      createdAt: statement.createdAt,
    };
    if (await this.deps.anchors.advance(tenant, undefined, anchor)) return anchor;
    return this.deps.anchors.get(tenant);
  }

  private async key(): Promise<StatementKey> {
    const { kid, key } = await this.deps.signer.current();
    const jwk = (await this.deps.signer.jwks()).keys.find((k) => k.kid === kid);
    if (!jwk) throw new AppError('service_unavailable', 'The signing key has no public key to publish');
    return { kid, key, jwk };
  }
}

function recordOf(a: AuditAnchor): AuditCheckpointRecord {
  return { seq: a.seq, hash: a.hash, createdAt: new Date(a.createdAt), kid: a.kid, jws: a.jws, jwk: a.jwk as JWK };
}
