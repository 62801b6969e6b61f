import { randomUUID } from 'node:crypto';
import { pipeline, Readable } from 'node:stream';
import {
  S3Client,
  HeadObjectCommand,
  GetObjectCommand,
  CopyObjectCommand,
  DeleteObjectCommand,
  HeadBucketCommand,
  CreateBucketCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { AppError } from '../kernel/errors.js';
import { hashingLimiter } from './fs.store.js';
import {
  assertSafeKey,
  contentEtag,
  type ByteRange,
  type ObjectInfo,
  type ObjectStore,
  type PutResult,
} from './object-store.js';

export interface S3StoreOptions {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Multipart part size; parts are the only buffered unit (constant memory per upload). */
  partSize?: number;
  /**
   * Longest wait for a response's headers, per attempt (sending a part included; a download's body
   * then streams for as long as its reader takes).
   */
  requestTimeoutMs?: number;
}

/** Staging prefix for content-addressed writes whose final name is only known once hashed. */
const STAGING = '.staging';

/**
 * S3 driver. Uploads stream through lib-storage's multipart `Upload` (parts of `partSize`, a few in
 * flight), so memory stays bounded whatever the object size. Content-addressed writes stage under a
 * random key while hashing, then a server-side copy names the object after its hash: bytes never pass
 * through this process twice.
 */
export class S3ObjectStore implements ObjectStore {
  readonly driver = 's3' as const;
  private readonly s3: S3Client;
  private readonly bucket: string;
  private readonly partSize: number;

  constructor(opts: S3StoreOptions) {
    const cfg: S3ClientConfig = {
      region: opts.region,
      endpoint: opts.endpoint,
      forcePathStyle: opts.forcePathStyle,
      // Checksums only where S3 requires them: S3-compatible servers differ in the newer defaults.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A server that accepts connections but never answers would otherwise hold every request for good.
      requestHandler: { requestTimeout: opts.requestTimeoutMs ?? 20_000, throwOnRequestTimeout: true },
    };
    if (opts.accessKeyId && opts.secretAccessKey)
      cfg.credentials = { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey };
    this.s3 = new S3Client(cfg);
    this.bucket = opts.bucket;
    this.partSize = Math.max(opts.partSize ?? 8 * 1024 * 1024, 5 * 1024 * 1024);
  }

  /**
   * One S3 request. A refusal of the service's own credentials (401/403), a missing bucket or a server
   * that cannot be reached is the service's trouble, not the caller's: a coded `service_unavailable`
   * (503, retry), never a raw SDK error that would surface as a 500. Not-found (of an object) and range
   * answers go to the caller as they are.
   */
  private async send<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      throw storageFailure(e) ?? e;
    }
  }

  /** Creates the bucket when missing (embedded and test setups; production buckets are provisioned). */
  async ensureBucket(): Promise<void> {
    const exists = await this.s3.send(new HeadBucketCommand({ Bucket: this.bucket })).then(
      () => true,
      () => false,
    );
    if (!exists) await this.s3.send(new CreateBucketCommand({ Bucket: this.bucket }));
  }

  private async upload(key: string, body: Readable | Buffer, contentType?: string): Promise<void> {
    const upload = new Upload({
      client: this.s3,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: contentType },
      partSize: this.partSize,
      queueSize: 2,
      leavePartsOnError: false,
    });
    await this.send(() => upload.done());
  }

  async putContentAddressed(
    prefix: string,
    body: Readable,
    opts: { contentType?: string; maxBytes?: number } = {},
  ): Promise<PutResult> {
    const staging = `${STAGING}/${randomUUID()}`;
    const h = hashingLimiter(opts.maxBytes);
    // The limiter's error must reach the caller even though lib-storage reads the piped stream.
    const piped = h.stream;
    pipeline(body, piped, () => undefined);
    try {
      await this.upload(staging, piped, opts.contentType);
      const { size, sha256 } = h.result();
      const key = `${prefix}/${sha256}`;
      assertSafeKey(key);
      if (await this.head(key)) return { key, size, sha256, created: false };
      await this.send(() =>
        this.s3.send(
          new CopyObjectCommand({
            Bucket: this.bucket,
            Key: key,
            CopySource: `${this.bucket}/${staging}`,
            ContentType: opts.contentType,
            MetadataDirective: 'REPLACE',
          }),
        ),
      );
      return { key, size, sha256, created: true };
    } finally {
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: staging })).catch(() => undefined);
    }
  }

  async put(key: string, body: Readable | Buffer, opts: { contentType?: string } = {}): Promise<PutResult> {
    assertSafeKey(key);
    const h = hashingLimiter();
    const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
    const piped = h.stream;
    pipeline(source, piped, () => undefined);
    await this.upload(key, piped, opts.contentType);
    return { key, ...h.result(), created: true };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    assertSafeKey(key);
    try {
      const r = await this.send(() => this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })));
      return {
        key,
        size: r.ContentLength ?? 0,
        etag: contentEtag(key) ?? stripQuotes(r.ETag),
        contentType: r.ContentType,
        lastModified: r.LastModified,
      };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async get(key: string, range?: ByteRange): Promise<{ info: ObjectInfo; body: Readable }> {
    assertSafeKey(key);
    const info = await this.head(key);
    if (!info) throw new AppError('file_not_found');
    if (range && (range.start > range.end || range.end >= info.size)) throw new AppError('range_not_satisfiable');
    try {
      const r = await this.send(() =>
        this.s3.send(
          new GetObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Range: range ? `bytes=${range.start}-${range.end}` : undefined,
          }),
        ),
      );
      return { info, body: r.Body as Readable };
    } catch (e) {
      if (isNotFound(e)) throw new AppError('file_not_found');
      throw e;
    }
  }

  async read(key: string, maxBytes: number): Promise<Buffer> {
    assertSafeKey(key);
    return this.send(async () => {
      let body: Readable;
      let length: number | undefined;
      try {
        const r = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
        body = r.Body as Readable;
        length = r.ContentLength;
      } catch (e) {
        if (isNotFound(e)) throw new AppError('file_not_found');
        throw e;
      }
      const tooLarge = () => new AppError('payload_too_large', `The object exceeds the limit of ${maxBytes} bytes`);
      if (length !== undefined && length > maxBytes) {
        body.destroy();
        throw tooLarge();
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of body) {
        size += (c as Buffer).length;
        if (size > maxBytes) {
          body.destroy();
          throw tooLarge();
        }
        chunks.push(c as Buffer);
      }
      return Buffer.concat(chunks, size);
    });
  }

  async delete(key: string): Promise<void> {
    assertSafeKey(key);
    await this.send(() => this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  async ping(): Promise<void> {
    try {
      await this.send(() => this.s3.send(new HeadBucketCommand({ Bucket: this.bucket })));
    } catch (e) {
      // HEAD answers carry no error code: a 404 is a missing bucket, or (versitygw) an unknown access key.
      if (isNotFound(e))
        throw new AppError('service_unavailable', "The object store's bucket cannot be found", {
          cause: e,
          retryAfter: 30,
        });
      throw e;
    }
  }

  /** Releases the client's sockets. */
  close(): void {
    this.s3.destroy();
  }
}

function stripQuotes(etag: string | undefined): string {
  return (etag ?? '').replace(/^W\//, '').replace(/"/g, '');
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'TimeoutError',
]);

/** The coded error for a refused credential or an unreachable server (see `send`), or undefined. */
function storageFailure(e: unknown): AppError | undefined {
  if (e instanceof AppError) return undefined;
  const err = e as { name?: string; code?: string; cause?: { code?: string }; $metadata?: { httpStatusCode?: number } };
  const status = err?.$metadata?.httpStatusCode;
  // versitygw answers an unknown access key with 404 XAdminUserNotFound where S3 says 403 InvalidAccessKeyId.
  const refused =
    status === 401 ||
    status === 403 ||
    ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'XAdminUserNotFound'].includes(err?.name ?? '');
  // The SDK may re-wrap a socket error as a plain Error that keeps only its text ("connect ECONNREFUSED ...").
  const words = String((e as Error)?.message ?? '').match(/\b[A-Z][A-Za-z_]+\b/g) ?? [];
  const unreachable =
    status === undefined &&
    [err?.code, err?.name, err?.cause?.code, ...words].some((c) => c !== undefined && UNREACHABLE.has(c));
  if (refused)
    return new AppError('service_unavailable', "The object store refused the service's credentials", {
      cause: e,
      retryAfter: 30,
    });
  if (err?.name === 'NoSuchBucket')
    return new AppError('service_unavailable', "The object store's bucket does not exist", {
      cause: e,
      retryAfter: 30,
    });
  if (unreachable)
    return new AppError('service_unavailable', 'The object store cannot be reached', { cause: e, retryAfter: 5 });
  return undefined;
}

function isNotFound(e: unknown): boolean {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  return err?.name === 'NotFound' || err?.name === 'NoSuchKey' || err?.$metadata?.httpStatusCode === 404;
}
