import type { Request } from 'express';
import busboy from 'busboy';
import { AppError } from '../../../kernel/errors.js';
import type { UploadPart } from '../../../core/media/media.service.js';

type Item = UploadPart | { type: 'end' } | { type: 'error'; error: AppError };

const LIMITS = { files: 1, fields: 20, fieldSize: 4096, fieldNameSize: 100, parts: 30 };

/**
 * Turns a multipart/form-data request into parts in arrival order, streaming: a file part's bytes
 * are read by the consumer straight from the socket. Leaving early (an error, a refused file) stops
 * parsing and drains the rest of the request so the problem response goes out on a sane connection.
 */
export async function* multipartParts(req: Request): AsyncGenerator<UploadPart> {
  if (!/^multipart\/form-data/i.test(req.get('content-type') ?? '')) {
    throw new AppError('unsupported_media_type', 'Expected a multipart/form-data body');
  }
  let bb: busboy.Busboy;
  try {
    bb = busboy({ headers: req.headers, limits: LIMITS, defParamCharset: 'utf8' });
  } catch {
    throw new AppError('bad_request', 'Malformed multipart content type');
  }
  const queue: Item[] = [];
  let wake: (() => void) | undefined;
  const push = (item: Item) => {
    queue.push(item);
    wake?.();
    wake = undefined;
  };
  const refuse = (message: string) => push({ type: 'error', error: new AppError('validation_failed', message) });
  bb.on('field', (name, value, info) =>
    info.valueTruncated || info.nameTruncated
      ? refuse(`Field '${name}' is too long`)
      : push({ type: 'field', name, value }),
  );
  bb.on('file', (name, stream, info) => {
    // Busboy destroys an unfinished file stream with an error when the form breaks off; consumers that
    // read it attach their own handlers, skipped or abandoned streams must not crash the process.
    stream.on('error', () => undefined);
    push({ type: 'file', name, fileName: info.filename ?? '', stream });
  });
  bb.on('filesLimit', () => refuse('Only one file per request'));
  bb.on('fieldsLimit', () => refuse('Too many fields'));
  bb.on('partsLimit', () => refuse('Too many parts'));
  bb.on('close', () => push({ type: 'end' }));
  bb.on('error', () =>
    push({ type: 'error', error: new AppError('bad_request', 'Malformed or truncated multipart body') }),
  );
  // A client that disconnects mid-body never ends the pipe: fail the form so the store's write aborts.
  req.once('close', () => {
    if (!req.complete) bb.destroy(new Error('Unexpected end of form'));
  });
  req.pipe(bb);
  let finished = false;
  try {
    for (;;) {
      if (!queue.length) await new Promise<void>((r) => (wake = r));
      const item = queue.shift()!;
      if (item.type === 'end') {
        finished = true;
        return;
      }
      if (item.type === 'error') throw item.error;
      yield item;
    }
  } finally {
    if (!finished) {
      req.unpipe(bb);
      for (const item of queue) if (item.type === 'file') item.stream.resume();
      req.resume();
    }
  }
}
