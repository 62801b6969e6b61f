import busboy from 'busboy';
import type { Request } from 'express';
import { AppError } from '../../../kernel/errors.js';

export interface MultipartResult {
  fields: Record<string, string>;
  files: Map<string, { body: Buffer; fileName: string; mimeType: string }>;
}

/**
 * Reads a small multipart/form-data body (contact update: text fields and one avatar image) with
 * busboy. Sizes are bounded while streaming: a part over `maxFileBytes` is refused with 413 without
 * reading the rest, and unknown file parts are drained and ignored.
 */
export function readMultipart(
  req: Request,
  opts: { fileFields: string[]; maxFileBytes: number; maxFields?: number },
): Promise<MultipartResult> {
  if (!req.is('multipart/form-data'))
    return Promise.reject(new AppError('unsupported_media_type', 'Send multipart/form-data'));
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: req.headers,
        limits: {
          fileSize: opts.maxFileBytes,
          files: opts.fileFields.length,
          fields: opts.maxFields ?? 20,
          fieldSize: 10_000,
        },
      });
    } catch {
      return reject(new AppError('bad_request', 'Malformed multipart body'));
    }
    const out: MultipartResult = { fields: {}, files: new Map() };
    let failed: AppError | undefined;
    bb.on('field', (name, value) => {
      out.fields[name] = value;
    });
    bb.on('file', (name, stream, info) => {
      if (!opts.fileFields.includes(name)) return void stream.resume();
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => {
        failed ??= new AppError('payload_too_large', `${name}: at most ${opts.maxFileBytes} bytes`, {
          errors: [{ field: name, message: `at most ${opts.maxFileBytes} bytes` }],
        });
      });
      stream.on('end', () =>
        out.files.set(name, { body: Buffer.concat(chunks), fileName: info.filename ?? '', mimeType: info.mimeType }),
      );
    });
    bb.on('error', () => reject(new AppError('bad_request', 'Malformed multipart body')));
    bb.on('close', () => (failed ? reject(failed) : resolve(out)));
    req.pipe(bb);
  });
}
