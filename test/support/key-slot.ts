/**
 * The Redis Cluster slot of a key (CRC16-XMODEM of the key, or of its hash tag: the text between the
 * first `{` and the next `}` when not empty, modulo 16384), as the cluster specification defines it.
 */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/** The distinct slots of `keys` (one element when they may be used together on a cluster). */
export function slotsOf(keys: readonly string[]): number[] {
  return [...new Set(keys.map(keySlot))];
}
