import { createHash, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CompactEncrypt, compactDecrypt, decodeProtectedHeader } from 'jose';
import { parseKek, type KeyEncryptionSettings } from '../config/key-encryption.js';

/** A key-encryption key: 32 bytes and its id (a fingerprint, so stored values name the key that sealed them). */
export interface KeyEncryptionKey {
  id: string;
  key: Uint8Array;
}

/** `kek-` + the first 9 bytes of SHA-256 of the key: names the key without revealing it. */
export function kekId(key: Uint8Array): string {
  return `kek-${createHash('sha256').update(key).digest().subarray(0, 9).toString('base64url')}`;
}

const ALG = 'A256KW';
const ENC = 'A256GCM';

/**
 * Seals secrets kept in Redis (private signing keys, cookie keys) under a key-encryption key: a JWE
 * (RFC 7516) with a fresh AES-256-GCM content key per value, wrapped with AES key wrap under the KEK,
 * whose id is in the protected header. `context` (also in the protected header) binds a value to the
 * slot it was written to. Values sealed under a previous KEK still open, and say so (`stale`), so
 * their stores can write them back under the current one.
 */
export class KeyVault {
  private readonly byId: Map<string, Uint8Array>;

  constructor(
    readonly current: KeyEncryptionKey,
    readonly previous: readonly KeyEncryptionKey[] = [],
  ) {
    this.byId = new Map([current, ...previous].map((k) => [k.id, k.key]));
  }

  async seal(context: string, plaintext: string): Promise<string> {
    return new CompactEncrypt(new TextEncoder().encode(plaintext))
      .setProtectedHeader({ alg: ALG, enc: ENC, kid: this.current.id, ctx: context })
      .encrypt(this.current.key);
  }

  /** Opens a sealed value; throws KeyVaultError (naming the settings) when no configured KEK sealed it. */
  async open(context: string, sealed: string, where: string): Promise<{ plaintext: string; stale: boolean }> {
    let kid: string | undefined;
    let ctx: unknown;
    try {
      const header = decodeProtectedHeader(sealed);
      kid = header.kid;
      ctx = header.ctx;
    } catch {
      throw new KeyVaultError(`${where} is not a sealed value (JWE); it was not written by this service`);
    }
    const key = kid ? this.byId.get(kid) : undefined;
    if (!key) {
      throw new KeyVaultError(
        `${where} was encrypted with key-encryption key ${kid ?? '(none)'}, which is neither KEY_ENCRYPTION_KEY (${this.current.id}) nor KEY_ENCRYPTION_KEY_PREVIOUS (${this.previous.map((k) => k.id).join(', ') || 'unset'}). ` +
          'Configure the key it was encrypted with (the current one as KEY_ENCRYPTION_KEY_PREVIOUS while rotating); deleting it instead signs every user out',
      );
    }
    if (ctx !== context) throw new KeyVaultError(`${where} was sealed for '${String(ctx)}', not '${context}': refused`);
    try {
      const { plaintext } = await compactDecrypt(sealed, key, {
        keyManagementAlgorithms: [ALG],
        contentEncryptionAlgorithms: [ENC],
      });
      return { plaintext: new TextDecoder().decode(plaintext), stale: kid !== this.current.id };
    } catch (e) {
      throw new KeyVaultError(`${where} does not decrypt under key-encryption key ${kid}: tampered or corrupt`, {
        cause: e,
      });
    }
  }
}

/**
 * The key-encryption keys are missing or unusable, or the stored keys cannot be opened with them: the
 * node must not start (src/main.ts exits 78 with the message, which names the setting).
 */
export class KeyVaultError extends Error {
  constructor(message: string, opts?: { cause?: unknown; setting?: string }) {
    super(`${opts?.setting ?? 'KEY_ENCRYPTION_KEY'}: ${message}`, opts?.cause ? { cause: opts.cause } : undefined);
    this.name = 'KeyVaultError';
  }
}

function readKeyFile(file: string, setting: string): Uint8Array {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new KeyVaultError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`, { setting });
  }
  const key = parseKek(text);
  if (!key)
    throw new KeyVaultError(`${file} must hold 32 random bytes in base64 (openssl rand -base64 32)`, { setting });
  return key;
}

/**
 * The development key, generated once under .local/ (mode 0600). Created beside and linked into place,
 * so concurrent first starts agree on one key.
 */
function devKey(file: string): Uint8Array {
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  return readKeyFile(file, 'KEY_ENCRYPTION_KEY');
}

function resolve(value: string | undefined, file: string | undefined, setting: string): Uint8Array | undefined {
  if (value) {
    const key = parseKek(value);
    if (!key) throw new KeyVaultError('must be 32 random bytes in base64 (openssl rand -base64 32)', { setting });
    return key;
  }
  return file ? readKeyFile(file, `${setting}_FILE`) : undefined;
}

/** Builds the vault from the settings: the configured key, else (development and tests) the .local key. */
export function keyVaultFrom(s: KeyEncryptionSettings): KeyVault {
  const current = resolve(s.key, s.keyFile, 'KEY_ENCRYPTION_KEY') ?? (s.devKeyFile ? devKey(s.devKeyFile) : undefined);
  if (!current) throw new KeyVaultError('required (or KEY_ENCRYPTION_KEY_FILE)');
  const previous = resolve(s.previous, s.previousFile, 'KEY_ENCRYPTION_KEY_PREVIOUS');
  return new KeyVault({ id: kekId(current), key: current }, previous ? [{ id: kekId(previous), key: previous }] : []);
}
