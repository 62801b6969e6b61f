import { pipeline, Transform, type Readable } from 'node:stream';
import { AppError } from '../../kernel/errors.js';

import type { UploadLimits } from '../../data/repositories/media-file.repository.js';

export type { UploadLimits } from '../../data/repositories/media-file.repository.js';

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'other';

interface FileType {
  contentType: string;
  kind: MediaKind;
  /** True when the leading bytes prove the type; text types are checked by `looksLikeText`. */
  matches(head: Buffer): boolean;
}

const at = (head: Buffer, offset: number, bytes: number[] | string) => {
  const want = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes);
  return head.length >= offset + want.length && head.subarray(offset, offset + want.length).equals(want);
};
const zip = (h: Buffer) => at(h, 0, [0x50, 0x4b, 0x03, 0x04]);
const riff = (kind: string) => (h: Buffer) => at(h, 0, 'RIFF') && at(h, 8, kind);
const jpeg = (h: Buffer) => at(h, 0, [0xff, 0xd8, 0xff]);
const ftyp = (h: Buffer) => at(h, 4, 'ftyp');
const mp3 = (h: Buffer) => at(h, 0, 'ID3') || (h.length >= 2 && h[0] === 0xff && (h[1]! & 0xe0) === 0xe0);

/** Known extensions and the file headers ("magic bytes") that must open them. */
export const FILE_TYPES: Readonly<Record<string, FileType>> = {
  jpg: { contentType: 'image/jpeg', kind: 'image', matches: jpeg },
  jpeg: { contentType: 'image/jpeg', kind: 'image', matches: jpeg },
  png: {
    contentType: 'image/png',
    kind: 'image',
    matches: (h) => at(h, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  },
  gif: { contentType: 'image/gif', kind: 'image', matches: (h) => at(h, 0, 'GIF87a') || at(h, 0, 'GIF89a') },
  webp: { contentType: 'image/webp', kind: 'image', matches: riff('WEBP') },
  pdf: { contentType: 'application/pdf', kind: 'document', matches: (h) => at(h, 0, '%PDF-') },
  mp4: { contentType: 'video/mp4', kind: 'video', matches: ftyp },
  mov: {
    contentType: 'video/quicktime',
    kind: 'video',
    matches: (h) => ftyp(h) || at(h, 4, 'moov') || at(h, 4, 'wide'),
  },
  webm: { contentType: 'video/webm', kind: 'video', matches: (h) => at(h, 0, [0x1a, 0x45, 0xdf, 0xa3]) },
  mp3: { contentType: 'audio/mpeg', kind: 'audio', matches: mp3 },
  m4a: { contentType: 'audio/mp4', kind: 'audio', matches: ftyp },
  wav: { contentType: 'audio/wav', kind: 'audio', matches: riff('WAVE') },
  ogg: { contentType: 'audio/ogg', kind: 'audio', matches: (h) => at(h, 0, 'OggS') },
  xlsx: {
    contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    kind: 'document',
    matches: zip,
  },
  docx: {
    contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    kind: 'document',
    matches: zip,
  },
  pptx: {
    contentType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    kind: 'document',
    matches: zip,
  },
  zip: { contentType: 'application/zip', kind: 'other', matches: zip },
  txt: { contentType: 'text/plain; charset=utf-8', kind: 'document', matches: looksLikeText },
  csv: { contentType: 'text/csv; charset=utf-8', kind: 'document', matches: looksLikeText },
};

/**
 * Headers of things that must never be stored as media whatever their name: native executables,
 * scripts with an interpreter line, and markup a browser would run. Checked before the type's own rule,
 * so a polyglot that opens like an executable is refused even if it also passes as something else.
 */
const DANGEROUS: readonly ((h: Buffer) => boolean)[] = [
  (h) => at(h, 0, 'MZ'), // Windows PE
  (h) => at(h, 0, [0x7f, 0x45, 0x4c, 0x46]), // ELF
  (h) =>
    [
      [0xfe, 0xed, 0xfa, 0xce],
      [0xfe, 0xed, 0xfa, 0xcf],
      [0xce, 0xfa, 0xed, 0xfe],
      [0xcf, 0xfa, 0xed, 0xfe],
      [0xca, 0xfe, 0xba, 0xbe],
    ].some((m) => at(h, 0, m)), // Mach-O
  (h) => at(h, 0, '#!'), // shell and interpreter scripts
  (h) => /^\s*<(!doctype\s+html|html|script|svg|\?xml)/i.test(h.subarray(0, 512).toString('latin1')), // active markup
];

/** How many leading bytes the checks need; buffered once per upload, then streamed through. */
export const SIGNATURE_BYTES = 4096;

function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  const s = head.toString('utf8');
  // A truncated multi-byte sequence at the end of the window is not evidence of binary content.
  const replacements = (s.slice(0, -4).match(/\uFFFD/g) ?? []).length;
  return replacements === 0;
}

/** Lower-case extension of a client file name ('' when none). */
export function extensionOf(fileName: string): string {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/** Checks the name against the tenant's allowed extensions; returns the extension. */
export function checkExtension(fileName: string, limits: UploadLimits): string {
  const ext = extensionOf(fileName);
  const allowed = limits.allowedExtensions.map((e) => e.toLowerCase().replace(/^\./, ''));
  if (!ext || !allowed.includes(ext)) {
    throw new AppError(
      'file_type_not_allowed',
      `Files of type '.${ext || '(none)'}' are not allowed; allowed: ${allowed.join(', ')}`,
    );
  }
  return ext;
}

/** The type the service records and serves for an extension (never the client's claimed mime type). */
export function typeOf(ext: string): { contentType: string; kind: MediaKind } {
  const t = FILE_TYPES[ext];
  return t ? { contentType: t.contentType, kind: t.kind } : { contentType: 'application/octet-stream', kind: 'other' };
}

/** Throws file_content_mismatch unless `head` is a plausible opening of a file with extension `ext`. */
export function checkSignature(ext: string, head: Buffer): void {
  if (head.length === 0) throw new AppError('file_content_mismatch', 'The file is empty');
  if (DANGEROUS.some((d) => d(head)))
    throw new AppError('file_content_mismatch', 'The file content is an executable or active content');
  const t = FILE_TYPES[ext];
  if (t && !t.matches(head)) throw new AppError('file_content_mismatch', `The file content is not a .${ext} file`);
}

/**
 * A pass-through that holds back the first SIGNATURE_BYTES, checks them against the extension, then
 * streams everything on. Memory stays bounded by the window whatever the file size.
 */
export function signatureGuard(ext: string): Transform {
  let head: Buffer[] = [];
  let held = 0;
  let checked = false;
  const release = (t: Transform): Error | undefined => {
    const all = Buffer.concat(head);
    head = [];
    try {
      checkSignature(ext, all);
    } catch (e) {
      return e as Error;
    }
    checked = true;
    t.push(all);
    return undefined;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      if (checked) return cb(null, chunk);
      head.push(chunk);
      held += chunk.length;
      cb(held >= SIGNATURE_BYTES ? release(this) : undefined);
    },
    flush(cb) {
      cb(checked ? undefined : release(this));
    },
  });
}

/**
 * Connects an upload's source to a signature guard with full error and close propagation: a client
 * that disconnects mid-file ends the store's write with an error instead of leaving it waiting.
 */
export function guardedSource(source: Readable, ext: string): Transform {
  const guard = signatureGuard(ext);
  pipeline(source, guard, () => undefined);
  return guard;
}

/** Maps a failed streaming write to what the client did wrong, when it was the client. */
export function uploadFailure(e: unknown): unknown {
  const err = e as { code?: string; message?: string };
  if (err?.code === 'ERR_STREAM_PREMATURE_CLOSE' || /Unexpected end of (form|file)/i.test(err?.message ?? '')) {
    return new AppError('bad_request', 'The upload was interrupted or the multipart body is malformed', { cause: e });
  }
  return e;
}
