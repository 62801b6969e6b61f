import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { describe, it, expect } from '@jest/globals';
import type { ObjectStore } from '../../../src/storage/object-store.js';
import { layout } from '../../../src/storage/layout.js';

export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Deterministic bytes produced chunk by chunk, so large bodies never sit in memory whole. */
function generated(total: number, seed: number): { stream: () => Readable; sha256: string } {
  const chunk = (i: number) => Buffer.alloc(64 * 1024, (i * 31 + seed) % 251);
  const count = Math.ceil(total / (64 * 1024));
  const h = createHash('sha256');
  for (let i = 0; i < count; i++) h.update(chunk(i));
  return {
    sha256: h.digest('hex'),
    stream: () =>
      Readable.from(
        (function* () {
          for (let i = 0; i < count; i++) yield chunk(i);
        })(),
      ),
  };
}

/**
 * The behaviour every ObjectStore driver must show; run against each driver with its own prefix.
 * `store()` is read lazily because drivers start in beforeAll.
 */
export function objectStoreContract(name: string, store: () => ObjectStore, prefix: () => string): void {
  describe(`ObjectStore contract: ${name}`, () => {
    it('stores content under its hash, once', async () => {
      const bytes = randomBytes(5000);
      const first = await store().putContentAddressed(`${prefix()}/media`, Readable.from([bytes]), {
        contentType: 'image/png',
      });
      expect(first).toEqual({ key: `${prefix()}/media/${sha(bytes)}`, size: 5000, sha256: sha(bytes), created: true });
      const again = await store().putContentAddressed(
        `${prefix()}/media`,
        Readable.from([bytes.subarray(0, 10), bytes.subarray(10)]),
      );
      expect(again).toEqual({ ...first, created: false });
      const info = await store().head(first.key);
      expect(info).toMatchObject({ key: first.key, size: 5000, etag: sha(bytes), contentType: 'image/png' });
    });

    it('streams whole objects and inclusive byte ranges', async () => {
      const bytes = randomBytes(4096);
      const { key } = await store().putContentAddressed(`${prefix()}/media`, Readable.from([bytes]));
      const whole = await store().get(key);
      expect(await readAll(whole.body)).toEqual(bytes);
      const part = await store().get(key, { start: 100, end: 199 });
      expect(await readAll(part.body)).toEqual(bytes.subarray(100, 200));
      const tail = await store().get(key, { start: 4095, end: 4095 });
      expect(await readAll(tail.body)).toEqual(bytes.subarray(4095));
      await expect(store().get(key, { start: 10, end: 4096 })).rejects.toMatchObject({ code: 'range_not_satisfiable' });
      await expect(store().get(key, { start: 20, end: 10 })).rejects.toMatchObject({ code: 'range_not_satisfiable' });
    });

    it('reports absent objects', async () => {
      expect(await store().head(`${prefix()}/media/${'0'.repeat(64)}`)).toBeNull();
      await expect(store().get(`${prefix()}/media/${'0'.repeat(64)}`)).rejects.toMatchObject({
        code: 'file_not_found',
      });
    });

    it('aborts a write past maxBytes and leaves nothing behind', async () => {
      const bytes = randomBytes(10_000);
      await expect(
        store().putContentAddressed(
          `${prefix()}/media`,
          Readable.from([bytes.subarray(0, 6000), bytes.subarray(6000)]),
          { maxBytes: 8000 },
        ),
      ).rejects.toMatchObject({ code: 'payload_too_large' });
      expect(await store().head(`${prefix()}/media/${sha(bytes)}`)).toBeNull();
      const exact = await store().putContentAddressed(`${prefix()}/media`, Readable.from([bytes.subarray(0, 8000)]), {
        maxBytes: 8000,
      });
      expect(exact.size).toBe(8000);
    });

    it('propagates a failing source stream and stores nothing', async () => {
      const source = new Readable({
        read() {
          this.destroy(new Error('client went away'));
        },
      });
      await expect(store().putContentAddressed(`${prefix()}/media`, source)).rejects.toThrow('client went away');
    });

    it('streams a multi-part sized object in bounded chunks with the right hash', async () => {
      const big = generated(11 * 1024 * 1024, 7);
      const r = await store().putContentAddressed(`${prefix()}/media`, big.stream(), { contentType: 'video/mp4' });
      expect(r).toMatchObject({ sha256: big.sha256, size: 11 * 1024 * 1024, created: true });
      const back = createHash('sha256');
      for await (const c of (await store().get(r.key)).body) back.update(c as Buffer);
      expect(back.digest('hex')).toBe(big.sha256);
    });

    it('puts exact multi-segment keys, overwrites them and deletes them', async () => {
      const key = `${prefix()}/assets/logos/2024/main.png`;
      const put = await store().put(key, Buffer.from('one'), { contentType: 'image/png' });
      expect(put).toMatchObject({ key, size: 3, sha256: sha(Buffer.from('one')) });
      expect(await store().head(key)).toMatchObject({ key, size: 3, contentType: 'image/png' });
      await store().put(key, Readable.from([Buffer.from('two!')]));
      const got = await store().get(key);
      expect((await readAll(got.body)).toString()).toBe('two!');
      expect(got.info.size).toBe(4);
      expect(got.info.etag).toBeTruthy();
      await store().delete(key);
      expect(await store().head(key)).toBeNull();
      await expect(store().delete(key)).resolves.toBeUndefined();
    });

    it('reads a whole object bounded by a size, and refuses a larger or absent one', async () => {
      const bytes = randomBytes(70_000); // more than one read of the fs driver's stream chunks
      const { key } = await store().putContentAddressed(`${prefix()}/media`, Readable.from([bytes]));
      expect(await store().read(key, 70_000)).toEqual(bytes);
      await expect(store().read(key, 69_999)).rejects.toMatchObject({ code: 'payload_too_large' });
      await expect(store().read(`${prefix()}/media/${'1'.repeat(64)}`, 1e6)).rejects.toMatchObject({
        code: 'file_not_found',
      });
      // A key that is a "directory" of other keys is no object either.
      await store().put(`${prefix()}/dir/inner`, Buffer.from('x'));
      await expect(store().read(`${prefix()}/dir`, 1e6)).rejects.toMatchObject({ code: 'file_not_found' });
      await expect(store().read('../x', 1e6)).rejects.toMatchObject({ code: 'bad_request' });
      // Into memory the caller supplies (decision 1189), larger than the object: a view of its start. A
      // driver of local files asks for the object's size and uses it; another may allocate its own.
      const supplied = Buffer.alloc(100_000, 7);
      const asked: number[] = [];
      const into = await store().read(key, 70_000, (size) => (asked.push(size), supplied));
      expect(into).toEqual(bytes);
      if (store().driver === 'fs') {
        expect(asked).toEqual([70_000]);
        expect(into.buffer).toBe(supplied.buffer);
        expect(supplied.subarray(0, 70_000)).toEqual(bytes);
      }
      await expect(store().read(key, 69_999, () => supplied)).rejects.toMatchObject({ code: 'payload_too_large' });
      // A driver whose objects are local files names the file instead, under the same bounds and errors.
      const local = store().localFile?.bind(store());
      if (store().driver === 'fs') expect(local).toBeDefined();
      if (local) {
        expect(await readFile(await local(key, 70_000))).toEqual(bytes);
        await expect(local(key, 69_999)).rejects.toMatchObject({ code: 'payload_too_large' });
        await expect(local(`${prefix()}/media/${'1'.repeat(64)}`, 1e6)).rejects.toMatchObject({
          code: 'file_not_found',
        });
        await expect(local(`${prefix()}/dir`, 1e6)).rejects.toMatchObject({ code: 'file_not_found' });
        await expect(local('../x', 1e6)).rejects.toMatchObject({ code: 'bad_request' });
      }
    });

    it('puts a buffer into a new directory and over an existing key, with its hash', async () => {
      const key = `${prefix()}/thumbs/${Date.now()}/ab/${'c'.repeat(64)}`;
      const one = randomBytes(3000);
      expect(await store().put(key, one, { contentType: 'image/webp' })).toEqual({
        key,
        size: 3000,
        sha256: sha(one),
        created: true,
      });
      const two = randomBytes(10);
      await store().put(key, two);
      expect(await store().read(key, 1e6)).toEqual(two);
      expect(await store().head(key)).toMatchObject({ size: 10 });
    });

    it("reports each object's content type: a thumbnail's as WebP, another type as put (decision 1188)", async () => {
      const tenant = prefix().replace(/^t\//, '');
      const hash = (n: number) => sha(Buffer.from(`${name}-${Date.now()}-${n}`));
      const thumb = layout.thumbnail(tenant, hash(1));
      await store().put(thumb, randomBytes(100), { contentType: 'image/webp' });
      expect(await store().head(thumb)).toMatchObject({ size: 100, contentType: 'image/webp' });
      const odd = layout.thumbnail(tenant, hash(2));
      await store().put(odd, randomBytes(10), { contentType: 'image/png' });
      expect(await store().head(odd)).toMatchObject({ contentType: 'image/png' });
      const other = `${prefix()}/assets/${hash(3)}.webp`;
      await store().put(other, randomBytes(10), { contentType: 'image/webp' });
      expect(await store().head(other)).toMatchObject({ contentType: 'image/webp' });
      const untyped = `${prefix()}/assets/${hash(4)}.webp`;
      await store().put(untyped, randomBytes(10));
      expect((await store().head(untyped))?.contentType ?? 'unset').not.toBe('image/webp');
    });

    it('refuses keys that could escape the namespace or reach driver bookkeeping', async () => {
      for (const key of ['../x', 'a/../b', '/abs', 'a//b', '.staging/x', '.tmp/x', 'a\\b', 'x.meta', 'a/\u0000b', '']) {
        await expect(store().put(key, Buffer.from('x'))).rejects.toMatchObject({ code: 'bad_request' });
        await expect(store().head(key)).rejects.toMatchObject({ code: 'bad_request' });
      }
    });

    it('answers ping', async () => {
      await expect(store().ping()).resolves.toBeUndefined();
    });
  });
}
