import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { Readable } from 'node:stream';
import { access, readdir, readlink, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { startTestNode, type TestNode } from '../../support/node.js';
import { startTestS3, type TestS3 } from '../../support/s3.js';
import { uniqueId } from '../../support/env.js';
import { objectStoreContract, readAll } from './object-store.contract.js';
import { S3ObjectStore } from '../../../src/storage/s3.store.js';
import { FsObjectStore } from '../../../src/storage/fs.store.js';
import { layout } from '../../../src/storage/layout.js';

/** Both drivers pass one contract: the fs driver of a node's default config, the S3 driver against s3rver. */
describe('storage drivers', () => {
  let fsNode: TestNode;
  let s3Node: TestNode;
  let s3: TestS3;
  const prefix = `t/${uniqueId()}`;

  beforeAll(async () => {
    s3 = await startTestS3();
    [fsNode, s3Node] = await Promise.all([startTestNode(), startTestNode(s3.env)]);
  });
  afterAll(async () => {
    await Promise.all([fsNode?.destroy(), s3Node?.destroy()]);
    await s3?.stop();
  });

  objectStoreContract(
    'fs',
    () => fsNode.infra.store,
    () => prefix,
  );
  objectStoreContract(
    's3',
    () => s3Node.infra.store,
    () => prefix,
  );
  // The fs driver with every call by the libuv threads (STORAGE_FS_SYNC_BYTES=0, decision 1190), on the
  // same root: the default above reads and writes the contract's small objects synchronously.
  let asyncFs: FsObjectStore | undefined;
  objectStoreContract(
    'fs, every call asynchronous (STORAGE_FS_SYNC_BYTES=0)',
    () => (asyncFs ??= new FsObjectStore(fsNode.infra.config.storage.fsRoot, { syncBytes: 0 })),
    () => `${prefix}/async`,
  );

  it('reads and puts objects on either side of STORAGE_FS_SYNC_BYTES alike, and leaves no descriptor open (decision 1190)', async () => {
    expect(fsNode.infra.config.storage.fsSyncBytes).toBe(1_048_576);
    const root = fsNode.infra.config.storage.fsRoot;
    const store = new FsObjectStore(root, { syncBytes: 4096 });
    const bound = path.join(root, prefix, 'sync-bound');
    // This process's descriptors open on the objects below (other descriptors come and go with the node).
    const openOnObjects = async () => {
      const targets = await Promise.all(
        (await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
      );
      return targets.filter((t) => t.startsWith(bound));
    };
    for (const size of [0, 1, 4095, 4096, 4097, 300_000]) {
      const key = `${prefix}/sync-bound/${size}`;
      const bytes = randomBytes(size);
      expect(await store.put(key, bytes)).toMatchObject({ size, created: true });
      expect(await store.read(key, size)).toEqual(bytes);
      expect(await fsNode.infra.store.read(key, size)).toEqual(bytes);
      // Refused on either side of the bound, the descriptor opened to size the object closed again.
      if (size) await expect(store.read(key, size - 1)).rejects.toMatchObject({ code: 'payload_too_large' });
      await expect(store.read(`${prefix}/sync-bound`, 1e6)).rejects.toMatchObject({ code: 'file_not_found' });
    }
    for (let i = 0; i < 50; i++) await expect(store.read(`${prefix}/sync-bound/4096`, 10)).rejects.toThrow();
    expect(await openOnObjects()).toEqual([]);
    // A staging directory removed under a running node is made again, by the synchronous put as by the other.
    await rm(path.join(root, '.tmp'), { recursive: true, force: true });
    await store.put(`${prefix}/sync-bound/again`, Buffer.from('small'));
    await rm(path.join(root, '.tmp'), { recursive: true, force: true });
    await store.put(`${prefix}/sync-bound/again-large`, randomBytes(5000));
    expect((await store.read(`${prefix}/sync-bound/again`, 10)).toString()).toBe('small');
  });

  it('wires the driver named by configuration and reports it ready', async () => {
    expect(fsNode.infra.store.driver).toBe('fs');
    expect(s3Node.infra.store.driver).toBe('s3');
    const ready = await s3Node.http.get('/readyz');
    expect(ready.body.checks.objectStore.status).toBe('up');
  });

  // (A refused credential needs a server that checks signatures, which s3rver does not: decision 820.)
  it('answers an unreachable server with a coded error, never a raw SDK error', async () => {
    const gone = new S3ObjectStore({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      bucket: s3.bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
    });
    try {
      for (const store of [gone]) {
        await expect(store.head(`${prefix}/anything`)).rejects.toMatchObject({ code: 'service_unavailable' });
        await expect(store.get(`${prefix}/anything`)).rejects.toMatchObject({ code: 'service_unavailable' });
        await expect(store.put(`${prefix}/x`, Buffer.from('x'))).rejects.toMatchObject({ code: 'service_unavailable' });
        await expect(store.ping()).rejects.toMatchObject({ code: 'service_unavailable' });
      }
    } finally {
      gone.close();
    }
  });

  it('keeps no content-type file beside a thumbnail on the fs driver, and one beside another typed object', async () => {
    const tenant = prefix.replace(/^t\//, '');
    const root = fsNode.infra.config.storage.fsRoot;
    const thumb = layout.thumbnail(tenant, 'd'.repeat(64));
    await fsNode.infra.store.put(thumb, Buffer.from('webp'), { contentType: 'image/webp' });
    await expect(access(path.join(root, `${thumb}.meta`))).rejects.toMatchObject({ code: 'ENOENT' });
    const asset = `${prefix}/assets/logo.webp`;
    await fsNode.infra.store.put(asset, Buffer.from('webp'), { contentType: 'image/webp' });
    await expect(access(path.join(root, `${asset}.meta`))).resolves.toBeUndefined();
    await fsNode.infra.store.delete(thumb);
    expect(await fsNode.infra.store.head(thumb)).toBeNull();
  });

  it('keeps the two drivers apart', async () => {
    const r = await s3Node.infra.store.putContentAddressed(
      `${prefix}/only-s3`,
      Readable.from([Buffer.from('s3 only')]),
    );
    expect(await fsNode.infra.store.head(r.key)).toBeNull();
    expect((await readAll((await s3Node.infra.store.get(r.key)).body)).toString()).toBe('s3 only');
  });
});
