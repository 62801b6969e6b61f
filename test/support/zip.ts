import { deflateRawSync } from 'node:zlib';

/**
 * A minimal zip writer for hostile test inputs (exceljs only writes honest workbooks): each entry is
 * deflated, and the central directory may declare sizes other than the real ones; `zip64` declares an
 * entry's sizes in a ZIP64 extra field of the central directory (its 32-bit fields all ones).
 */
export function zipOf(entries: { name: string; data: Buffer; declaredSize?: number; zip64?: boolean }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const packed = deflateRawSync(e.data);
    const size = e.declaredSize ?? e.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(e.zip64 ? 0xffffffff : packed.length, 18);
    local.writeUInt32LE(e.zip64 ? 0xffffffff : size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(e.zip64 ? 45 : 20, 4);
    central.writeUInt16LE(e.zip64 ? 45 : 20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(e.zip64 ? 0xffffffff : packed.length, 20);
    central.writeUInt32LE(e.zip64 ? 0xffffffff : size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    const extra = Buffer.alloc(e.zip64 ? 20 : 0);
    if (e.zip64) {
      central.writeUInt16LE(extra.length, 30);
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(16, 2);
      extra.writeBigUInt64LE(BigInt(size), 4);
      extra.writeBigUInt64LE(BigInt(packed.length), 12);
    }
    locals.push(local, name, packed);
    centrals.push(central, name, extra);
    offset += local.length + name.length + packed.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}
