import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import {
  CompactSign,
  calculateJwkThumbprint,
  compactVerify,
  decodeProtectedHeader,
  importJWK,
  type CryptoKey,
  type JWK,
} from 'jose';
import { GENESIS_HASH } from './audit-chain.js';

/** Version of the signed statements (1: a head alone, before decision 1020; 2: linked, with every entry's hash). */
export const CHECKPOINT_VERSION = 2;
export const CHECKPOINT_ALG = 'ES256';
/** Entries one checkpoint signs at most; a longer stretch is signed as several checkpoints in a row. */
export const CHECKPOINT_MAX_ENTRIES = 1000;

/** A position of the chain and its hash: the head a statement signs, or the checkpoint it follows. */
export interface ChainPoint {
  seq: number;
  hash: string;
}

/**
 * What a checkpoint signs (decision 1020): the chain's head, the checkpoint before it (its head's
 * position and the SHA-256 of its statement) and the hash of every entry between them, so each entry
 * is signed and a change is named exactly. `key` is the RFC 7638 thumbprint of the signing key.
 */
export interface CheckpointStatement {
  typ: 'audit-checkpoint';
  v: 2;
  tenant: string;
  seq: number;
  hash: string;
  from: number;
  prev: string;
  entries: string[];
  key: string;
  createdAt: string;
}

/** A checkpoint of version 1 (decision 881): the head alone, not linked to the one before. */
export interface LegacyCheckpointStatement {
  typ: 'audit-checkpoint';
  v: 1;
  tenant: string;
  seq: number;
  hash: string;
  createdAt: string;
}

/**
 * What an export's seal signs at export time: the export's last entry as stored and the last checkpoint
 * it carries (its position and statement digest), so every earlier checkpoint is bound through the
 * digests and the auditor needs only the keys published on the day of the export.
 */
export interface SealStatement {
  typ: 'audit-export';
  v: 2;
  tenant: string;
  seq: number;
  hash: string;
  checkpoint: { seq: number; digest: string };
  key: string;
  exportedAt: string;
}

export type AnyCheckpointStatement = CheckpointStatement | LegacyCheckpointStatement;

const TYP = { 'audit-checkpoint': 'audit-checkpoint+jws', 'audit-export': 'audit-export+jws' } as const;

/** The digest that links statements: SHA-256 (hex) of the exact signed bytes. */
export function statementDigest(payload: Uint8Array | string): string {
  return createHash('sha256').update(payload).digest('hex');
}

/** The empty chain's point and the digest "no checkpoint before". */
export const GENESIS: ChainPoint & { digest: string } = { seq: 0, hash: GENESIS_HASH, digest: GENESIS_HASH };

/** A key that signs: its id, private key and public JWK. */
export interface StatementKey {
  kid: string;
  key: CryptoKey;
  jwk: JWK;
}

/** Signs a statement (RFC 8785 canonical JSON) as a compact JWS; returns it with its digest. */
export async function signStatement<S extends CheckpointStatement | SealStatement>(
  statement: Omit<S, 'key'>,
  key: StatementKey,
): Promise<{ jws: string; digest: string; statement: S }> {
  const full = { ...statement, key: await calculateJwkThumbprint(key.jwk) } as S;
  const payload = new TextEncoder().encode(canonicalize(full) as string);
  const jws = await new CompactSign(payload)
    .setProtectedHeader({ alg: CHECKPOINT_ALG, kid: key.kid, typ: TYP[statement.typ] })
    .sign(key.key);
  return { jws, digest: statementDigest(payload), statement: full };
}

/** The statement a JWS carries and its digest, without checking the signature (to link what follows). */
export function readStatement<S>(jws: string): { statement: S; digest: string } {
  const part = jws.split('.')[1];
  if (!part) throw new Error('not a compact JWS');
  const payload = Buffer.from(part, 'base64url');
  return { statement: JSON.parse(payload.toString('utf8')) as S, digest: statementDigest(payload) };
}

/**
 * Verifies a statement's JWS with the public key that comes with it and returns the statement and its
 * digest. Throws when the signature, the algorithm, the type or the form is wrong, and (version 2)
 * when the key is not the one the statement names. Whether the key is trusted is the caller's question.
 */
export async function openStatement<S extends AnyCheckpointStatement | SealStatement>(
  jws: string,
  jwk: JWK,
  typ: S['typ'],
): Promise<{ statement: S; digest: string }> {
  const header = decodeProtectedHeader(jws);
  if (header.typ !== TYP[typ]) throw new Error(`not an ${typ} statement`);
  const key = await importJWK(jwk, CHECKPOINT_ALG);
  const { payload } = await compactVerify(jws, key, { algorithms: [CHECKPOINT_ALG] });
  const s = JSON.parse(new TextDecoder().decode(payload)) as S;
  if (s.typ !== typ || typeof s.seq !== 'number' || typeof s.hash !== 'string' || typeof s.tenant !== 'string')
    throw new Error(`malformed ${typ} statement`);
  if (s.v === 2) {
    if (s.key !== (await calculateJwkThumbprint(jwk)))
      throw new Error('signed by a key other than the one the statement names');
    if (s.typ === 'audit-checkpoint') {
      const c = s as CheckpointStatement;
      if (
        !Array.isArray(c.entries) ||
        typeof c.from !== 'number' ||
        typeof c.prev !== 'string' ||
        c.entries.length !== c.seq - c.from ||
        c.entries[c.entries.length - 1] !== c.hash
      )
        throw new Error('malformed audit-checkpoint statement');
    }
  } else if ((s as { v: unknown }).v !== 1 || s.typ !== 'audit-checkpoint')
    throw new Error(`unknown ${typ} version ${String((s as { v: unknown }).v)}`);
  return { statement: s, digest: statementDigest(payload) };
}
