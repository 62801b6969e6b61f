import { describe, it, expect } from '@jest/globals';
import { Readable } from 'node:stream';
import { checkExtension, checkSignature, extensionOf, signatureGuard, typeOf } from './upload-policy.js';

const limits = { maxBytes: 1000, allowedExtensions: ['PNG', '.pdf', 'txt', 'bin'], maxImagePixels: 1 };
const hex = (s: string) => Buffer.from(s.replace(/\s/g, ''), 'hex');

describe('upload policy', () => {
  it('reads extensions from client names, including paths and odd cases', () => {
    expect(extensionOf('C:\\Users\\me\\scan.PDF')).toBe('pdf');
    expect(extensionOf('../../etc/passwd')).toBe('');
    expect(extensionOf('.bashrc')).toBe('');
    expect(extensionOf('archive.tar.gz')).toBe('gz');
  });

  it('normalises the tenant list and refuses anything else', () => {
    expect(checkExtension('a.png', limits)).toBe('png');
    expect(checkExtension('a.pdf', limits)).toBe('pdf');
    expect(() => checkExtension('a.exe', limits)).toThrow(expect.objectContaining({ code: 'file_type_not_allowed' }));
    expect(() => checkExtension('noext', limits)).toThrow(expect.objectContaining({ code: 'file_type_not_allowed' }));
  });

  it('matches headers per type', () => {
    expect(() => checkSignature('png', hex('89504e470d0a1a0a 0000000d'))).not.toThrow();
    expect(() => checkSignature('jpg', hex('ffd8ffe000104a46'))).not.toThrow();
    expect(() => checkSignature('webp', Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).not.toThrow();
    expect(() => checkSignature('wav', Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toThrow();
    expect(() => checkSignature('mp4', Buffer.from('\0\0\0\x18ftypmp42'))).not.toThrow();
    expect(() => checkSignature('txt', Buffer.from('héllo wörld\n'))).not.toThrow();
    expect(() => checkSignature('txt', Buffer.from('a\0b'))).toThrow();
    expect(() => checkSignature('png', Buffer.alloc(0))).toThrow();
  });

  it('refuses executables and active markup even for types without a signature', () => {
    for (const head of [
      'MZ\x90\0',
      '\x7fELF',
      '\xcf\xfa\xed\xfe',
      '#!/usr/bin/env node',
      '  <!DOCTYPE html><p>',
      '<svg onload=x>',
    ]) {
      expect(() => checkSignature('bin', Buffer.from(head, 'latin1'))).toThrow(
        expect.objectContaining({ code: 'file_content_mismatch' }),
      );
    }
    expect(() => checkSignature('bin', Buffer.from('anything else'))).not.toThrow();
    expect(typeOf('bin')).toEqual({ contentType: 'application/octet-stream', kind: 'other' });
  });

  it('checks the head once and streams everything through unchanged', async () => {
    const body = Buffer.concat([hex('89504e470d0a1a0a'), Buffer.alloc(10_000, 7)]);
    const chunks = [body.subarray(0, 3), body.subarray(3, 5000), body.subarray(5000)];
    const out: Buffer[] = [];
    for await (const c of Readable.from(chunks).pipe(signatureGuard('png'))) out.push(c as Buffer);
    expect(Buffer.concat(out).equals(body)).toBe(true);
    const bad = Readable.from([Buffer.from('not a png at all')]).pipe(signatureGuard('png'));
    await expect(
      (async () => {
        for await (const _ of bad) {
          /* drain */
        }
      })(),
    ).rejects.toMatchObject({ code: 'file_content_mismatch' });
  });
});
