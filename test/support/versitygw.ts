import { randomBytes } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore, type S3StoreOptions } from '../../src/storage/s3.store.js';
import { dedicated, type DedicatedService } from './dedicated-services.js';
import { uniqueId } from './env.js';

export interface TestVersitygw {
  endpoint: string;
  port: number;
  /** The posix backend's directory: one sub-directory per bucket, one file per object. */
  root: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /**
   * A driver on a bucket of its own, created here (`bucket` names an existing one instead); other
   * options override the server's (a wrong secret, a smaller part size). Close it after the test.
   */
  store(opts?: Partial<S3StoreOptions>): Promise<S3ObjectStore>;
  /** A plain SDK client with the server's credentials, to look at what the driver left. Destroy it after. */
  client(): S3Client;
  /** SIGSTOP: the server stops answering, with requests sent to it left in flight (`kill` ends it as it is). */
  freeze(): void;
  /** SIGCONT: a frozen server resumes. */
  thaw(): void;
  /** SIGKILL and wait for the port to close: a crash. */
  kill(): Promise<void>;
  /** Starts the server again on the same port and directory (after `kill`). */
  restart(): Promise<void>;
  /** Ends the server and removes its directory. */
  stop(): Promise<void>;
}

/**
 * A real S3 server used in production (versitygw, posix backend; decision 820) on an ephemeral
 * loopback port with a temporary directory and generated credentials. Unlike the in-process
 * emulator it checks every request's SigV4 signature. The binary is installed by `npm test`'s set-up
 * (scripts/services.mjs) or here on first use, which can take minutes: give the caller's beforeAll
 * a long time limit.
 */
export async function startVersitygw(): Promise<TestVersitygw> {
  // @ts-expect-error plain ESM script without types
  const { ensureVersitygw } = await import('../../scripts/services.mjs');
  const bin = (await ensureVersitygw()) as string;
  const accessKeyId = `ak${randomBytes(8).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  const region = 'us-east-1';
  const svc: DedicatedService = await dedicated('versitygw', 'http', (port, dir) => [
    bin,
    [
      '--access',
      accessKeyId,
      '--secret',
      secretAccessKey,
      '--region',
      region,
      '--port',
      `127.0.0.1:${port}`,
      '--quiet',
      'posix',
      dir,
    ],
  ]);
  const base = { endpoint: svc.url, region, bucket: '', accessKeyId, secretAccessKey, forcePathStyle: true };
  return {
    endpoint: svc.url,
    port: svc.port,
    root: svc.dataDir,
    region,
    accessKeyId,
    secretAccessKey,
    async store(opts = {}) {
      const bucket = opts.bucket ?? `t-${uniqueId()}`;
      if (!opts.bucket) {
        const owner = new S3ObjectStore({ ...base, bucket });
        try {
          await owner.ensureBucket();
        } finally {
          owner.close();
        }
      }
      return new S3ObjectStore({ ...base, ...opts, bucket });
    },
    client() {
      return new S3Client({
        endpoint: svc.url,
        region,
        forcePathStyle: true,
        credentials: { accessKeyId, secretAccessKey },
      });
    },
    freeze: () => svc.signal('SIGSTOP'),
    thaw: () => svc.signal('SIGCONT'),
    kill: () => svc.kill(),
    restart: () => svc.start(),
    stop: () => svc.destroy(),
  };
}
