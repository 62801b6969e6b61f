/** Where the key-encryption keys come from (config.auth.keyEncryption). */
export interface KeyEncryptionSettings {
  key?: string;
  keyFile?: string;
  previous?: string;
  previousFile?: string;
  /** Development only: the key kept under .local/ when none is configured. */
  devKeyFile?: string;
}

/** Parses a key-encryption key written as base64 or base64url of exactly 32 bytes. */
export function parseKek(value: string): Uint8Array | undefined {
  const v = value.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) return undefined;
  const bytes = Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 32 ? new Uint8Array(bytes) : undefined;
}
