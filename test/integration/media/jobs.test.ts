import { Readable } from 'node:stream';
import sharp from 'sharp';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startTestNode, type TestNode } from '../../support/node.js';
import { createUser, tokenFor } from '../../support/auth.js';
import { ImportService } from '../../../src/core/media/import.service.js';
import { ImportRepository } from '../../../src/data/repositories/import.repository.js';
import { PendingUserRepository } from '../../../src/data/repositories/pending-user.repository.js';
import { MediaFileRepository } from '../../../src/data/repositories/media-file.repository.js';
import { thumbnailHandler, IN_MEMORY_SOURCE_BYTES } from '../../../src/workers/jobs/thumbnail.job.js';
import { SourceBuffers } from '../../../src/workers/jobs/source-buffers.js';
import { readPendingUserSheetChunks } from '../../../src/core/media/pending-user-sheet.js';
import { DEFAULT_SPREADSHEET_LIMITS, openWorkbook } from '../../../src/spreadsheet/index.js';
import { multipart, png, xlsx, xlsxOf, type FormPart } from '../../support/form.js';
import { MAX_REPORTED_ERRORS } from '../../../src/core/media/import.service.js';
import { zipOf } from '../../support/zip.js';
import { UnrecoverableError } from 'bullmq';
import pLimit from 'p-limit';
import { S3ObjectStore } from '../../../src/storage/s3.store.js';
import { layout } from '../../../src/storage/layout.js';

describe('media jobs on a worker node', () => {
  let node: TestNode;
  let admin: string;
  let clinician: string;

  const post = (route: string, token: string, parts: FormPart[], tenant = 'acme') => {
    const { body, headers } = multipart(parts);
    return node.http.post(route, { tenant, token, rawBody: body, headers });
  };
  const sheetPart = (fileName: string, content: Buffer): FormPart[] => [{ name: 'file', file: { fileName, content } }];
  const db = (tenant = 'acme') => node.infra.mongo.tenantDb(tenant).models;
  /** The import service as the node wires it, with other limits and no job queue or pushes. */
  const importService = (limits?: { maxRows: number }, heldUsernames?: number) => {
    const tdb = (t: string) => node.infra.mongo.tenantDb(t);
    return new ImportService({
      store: node.infra.store,
      imports: (t) => new ImportRepository(tdb(t)),
      pendingUsers: (t) => new PendingUserRepository(tdb(t)),
      mediaFiles: (t) => new MediaFileRepository(tdb(t)),
      notify: () => undefined,
      enqueueImport: async () => undefined,
      ...(limits ? { limits } : {}),
      ...(heldUsernames !== undefined ? { heldUsernames } : {}),
    });
  };

  beforeAll(async () => {
    node = await startTestNode({ ROLES: 'http,workers' });
    await createUser(node, 'acme', { username: 'ada', role: 'admin' });
    await createUser(node, 'acme', { username: 'carl', role: 'clinician' });
    admin = await tokenFor(node, 'acme', 'ada');
    clinician = await tokenFor(node, 'acme', 'carl');
  });
  afterAll(async () => node?.destroy());

  describe('thumbnail job', () => {
    it('produces a thumbnail before it is served', async () => {
      const image = await png(800, 600);
      const up = await post('/api/media/upload', clinician, [
        { name: 'file', file: { fileName: 'wound.png', content: image } },
      ]);
      expect(up.status).toBe(201);
      const { hash } = up.body.data;
      const job = await node.infra.queues.waitUntilFinished('thumbnail', `thumbnail.acme.${hash}`);
      expect(job.state).toBe('completed');
      const rec = await db().MediaFile.findById(up.body.data.id).lean();
      expect(rec).toMatchObject({ thumbnailStatus: 'ready', width: 800, height: 600 });
      const thumb = await node.http.get(`/api/media/thumbnail/acme/${hash}`, { tenant: 'acme', token: clinician });
      expect(thumb.status).toBe(200);
      expect(thumb.headers['content-type']).toBe('image/webp');
      const meta = await sharp(thumb.raw).metadata();
      expect(meta).toMatchObject({ format: 'webp', width: 320, height: 240 });
    });

    it('is idempotent, and a re-upload of the same image reuses the thumbnail', async () => {
      const image = await png(64, 64);
      const up = await post('/api/media/upload', clinician, [
        { name: 'file', file: { fileName: 'a.png', content: image } },
      ]);
      await node.infra.queues.waitUntilFinished('thumbnail', `thumbnail.acme.${up.body.data.hash}`);
      const run = thumbnailHandler({ store: node.infra.store, media: node.services.media });
      expect(await run({ tenant: 'acme', hash: up.body.data.hash })).toEqual({ status: 'skipped' });
      const again = await post('/api/media/upload', clinician, [
        { name: 'file', file: { fileName: 'b.png', content: image } },
      ]);
      expect(again.body.data.thumbnailStatus).toBe('ready');
    });

    it('refuses an image above the tenant pixel limit (decompression bomb) without retrying', async () => {
      await db().TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxImagePixels': 10_000 } });
      try {
        const image = await png(200, 100);
        const up = await post('/api/media/upload', clinician, [
          { name: 'file', file: { fileName: 'huge.png', content: image } },
        ]);
        const job = await node.infra.queues.waitUntilFinished('thumbnail', `thumbnail.acme.${up.body.data.hash}`);
        expect(job.state).toBe('failed');
        expect(job.attemptsMade).toBe(1);
        expect(job.failedReason).toMatch(/pixel limit/i);
        expect((await db().MediaFile.findById(up.body.data.id).lean())?.thumbnailStatus).toBe('failed');
        const thumb = await node.http.get(`/api/media/thumbnail/acme/${up.body.data.hash}`, {
          tenant: 'acme',
          token: clinician,
        });
        expect(thumb.status).toBe(409);
        expect(thumb.body.code).toBe('thumbnail_not_ready');
        const original = await node.http.get(up.body.data.url, { tenant: 'acme', token: clinician });
        expect(original.status).toBe(200);
        const again = await post('/api/media/upload', clinician, [
          { name: 'file', file: { fileName: 'huge-again.png', content: image } },
        ]);
        expect(again.body.data.thumbnailStatus).toBe('failed');
      } finally {
        await db().TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxImagePixels': 50_000_000 } });
      }
    });
  });

  describe('thumbnail job: the source', () => {
    /** An upload whose thumbnail job finished, and its record reset to pending for the handler runs below. */
    const uploaded = async (w: number, h: number) => {
      const up = await post('/api/media/upload', clinician, [
        { name: 'file', file: { fileName: `s${w}x${h}.png`, content: await png(w, h) } },
      ]);
      await node.infra.queues.waitUntilFinished('thumbnail', `thumbnail.acme.${up.body.data.hash}`);
      await db().MediaFile.updateOne({ _id: up.body.data.id }, { $set: { thumbnailStatus: 'pending' } });
      return up.body.data as { id: string; hash: string };
    };
    const status = async (id: string) => (await db().MediaFile.findById(id).lean())?.thumbnailStatus;

    it('leaves the thumbnail pending and the job retryable while the store cannot be reached', async () => {
      const up = await uploaded(90, 60);
      const gone = new S3ObjectStore({
        endpoint: 'http://127.0.0.1:9',
        region: 'us-east-1',
        bucket: 'none',
        accessKeyId: 'x',
        secretAccessKey: 'x',
        forcePathStyle: true,
      });
      try {
        // The store answers the thumbnail's HEAD, then becomes unreachable for the source's read.
        const fs = node.infra.store;
        const store = Object.assign(Object.create(Object.getPrototypeOf(fs) as object) as typeof fs, fs, {
          read: gone.read.bind(gone),
          localFile: undefined,
        });
        const run = thumbnailHandler({ store, media: node.services.media });
        const err = await run({ tenant: 'acme', hash: up.hash }).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'service_unavailable' });
        expect(err).not.toBeInstanceOf(UnrecoverableError);
        expect(await status(up.id)).toBe('pending');
      } finally {
        gone.close();
      }
    });

    it('refuses a source above the upload limit without decoding it, and marks a missing one failed', async () => {
      const up = await uploaded(120, 80);
      const run = thumbnailHandler({ store: node.infra.store, media: node.services.media });
      const before = (await db().TenantConfig.findById('tenant').lean())!.uploads!.maxBytes;
      await db().TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxBytes': 16 } });
      try {
        await expect(run({ tenant: 'acme', hash: up.hash })).rejects.toThrow(UnrecoverableError);
        await expect(run({ tenant: 'acme', hash: up.hash })).rejects.toThrow('source exceeds the upload limit');
      } finally {
        await db().TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxBytes': before } });
      }
      await node.infra.store.delete(layout.media('acme', up.hash));
      const missing = await run({ tenant: 'acme', hash: up.hash }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(UnrecoverableError);
      expect((missing as Error).message).toBe('source content is missing');
      expect(await status(up.id)).toBe('failed');
    });
  });

  describe('thumbnail jobs of a burst (decision 1187)', () => {
    /**
     * Uploads of distinct images whose thumbnail jobs finished, then their records set back to pending,
     * their thumbnails and their finished jobs removed: the contents a burst below queues again.
     */
    const stored = async (sizes: [number, number][]) => {
      const out: { id: string; hash: string; w: number; h: number }[] = [];
      for (const [w, h] of sizes) {
        const up = await post('/api/media/upload', clinician, [
          { name: 'file', file: { fileName: `b${w}x${h}.png`, content: await png(w, h) } },
        ]);
        expect(up.status).toBe(201);
        await node.infra.queues.waitUntilFinished('thumbnail', `thumbnail.acme.${up.body.data.hash}`);
        out.push({ id: up.body.data.id, hash: up.body.data.hash, w, h });
      }
      for (const f of out) {
        await db().MediaFile.updateOne({ _id: f.id }, { $set: { thumbnailStatus: 'pending' } });
        await node.infra.store.delete(layout.thumbnail('acme', f.hash));
        await node.infra.queues.queue('media').remove(`thumbnail.acme.${f.hash}`);
      }
      return out;
    };
    const record = async (id: string) => db().MediaFile.findById(id).lean();

    it('makes every thumbnail of a burst in fewer jobs than images, each record marked with its own size', async () => {
      const files = await stored([
        [41, 31],
        [42, 32],
        [43, 33],
        [44, 34],
        [45, 35],
      ]);
      // Queued as uploads queue them, in one burst: the first goes alone, the rest ride together.
      const queued = await Promise.all(files.map((f) => node.services.media.queueThumbnail('acme', f.hash)));
      const ids = [...new Set(queued.map((q) => q.id))];
      expect(ids).toHaveLength(2);
      expect(ids[0]).toBe(`thumbnail.acme.${files[0]!.hash}`);
      for (const id of ids)
        expect((await node.infra.queues.waitUntilFinished('thumbnail', id)).state).toBe('completed');
      const batch = await node.services.jobs.get('thumbnail', ids[1]!);
      expect(batch?.returnValue).toEqual({
        status: 'ready',
        thumbnails: files.slice(1).map((f) => ({ hash: f.hash, status: 'ready', width: f.w, height: f.h })),
      });
      for (const f of files)
        expect(await record(f.id)).toMatchObject({ thumbnailStatus: 'ready', width: f.w, height: f.h });
      const thumb = await node.http.get(`/api/media/thumbnail/acme/${files[3]!.hash}`, {
        tenant: 'acme',
        token: clinician,
      });
      expect(thumb.status).toBe(200);
      expect(await sharp(thumb.raw).metadata()).toMatchObject({ format: 'webp', width: 44, height: 34 });
    });

    it('makes and marks the others when one image of a job is refused, and fails the job naming it without retrying', async () => {
      const files = await stored([
        [51, 41],
        [52, 42],
        [200, 100], // above the limit set below
        [53, 43],
      ]);
      await db().TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxImagePixels': 10_000 } });
      try {
        const queued = await Promise.all(files.map((f) => node.services.media.queueThumbnail('acme', f.hash)));
        const batchId = queued[1]!.id;
        expect(queued.slice(1).every((q) => q.id === batchId)).toBe(true);
        const job = await node.infra.queues.waitUntilFinished('thumbnail', batchId);
        expect(job.state).toBe('failed');
        expect(job.attemptsMade).toBe(1);
        expect(job.failedReason).toMatch(/^1 of 3 images refused: image refused: .*pixel limit/i);
        expect(await record(files[2]!.id)).toMatchObject({ thumbnailStatus: 'failed' });
        for (const f of [files[1]!, files[3]!])
          expect(await record(f.id)).toMatchObject({ thumbnailStatus: 'ready', width: f.w, height: f.h });
      } finally {
        await db().TenantConfig.updateOne({ _id: 'tenant' }, { $set: { 'uploads.maxImagePixels': 50_000_000 } });
      }
    });

    it.each([
      ['one after another', undefined, 61],
      ["in the node's slots", pLimit(2), 71],
    ])(
      'keeps what a job made when the store fails on a later image, and its retry makes only the rest (%s)',
      async (_, slots, w) => {
        const [a, b] = await stored([
          [w, 51],
          [w + 1, 52],
        ]);
        // The store becomes unreachable for the second content's source.
        const fs = node.infra.store;
        const unreachable = (key: string) =>
          key === layout.media('acme', b!.hash)
            ? Promise.reject(Object.assign(new Error('store unreachable'), { code: 'service_unavailable' }))
            : undefined;
        const failing = Object.assign(Object.create(Object.getPrototypeOf(fs) as object) as typeof fs, fs, {
          read: (key: string, ...rest: [number, ((size: number) => Buffer)?]) =>
            unreachable(key) ?? fs.read(key, ...rest),
          localFile: (key: string, max: number) => unreachable(key) ?? fs.localFile!(key, max),
        });
        const data = { tenant: 'acme', hash: a!.hash, more: [b!.hash] };
        const err = await thumbnailHandler({ store: failing, media: node.services.media, slots })(data).catch(
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ message: 'store unreachable' });
        expect(err).not.toBeInstanceOf(UnrecoverableError);
        expect(await record(a!.id)).toMatchObject({ thumbnailStatus: 'ready', width: w, height: 51 });
        expect(await record(b!.id)).toMatchObject({ thumbnailStatus: 'pending' });
        const retry = await thumbnailHandler({ store: fs, media: node.services.media, slots })(data);
        expect(retry).toEqual({
          status: 'ready',
          thumbnails: [
            { hash: a!.hash, status: 'skipped' },
            { hash: b!.hash, status: 'ready', width: w + 1, height: 52 },
          ],
        });
        expect(await record(b!.id)).toMatchObject({ thumbnailStatus: 'ready', width: w + 1, height: 52 });
      },
    );

    it("renders in the node's slots: a lone job fills them, jobs at once never exceed them (decision 1188)", async () => {
      const files = await stored([
        [81, 61],
        [82, 62],
        [83, 63],
        [84, 64],
        [85, 65],
        [86, 66],
      ]);
      // Renders in flight: from reading a content's source to storing its thumbnail. Sources are held until
      // the phase's condition holds, so every render that could start has started when they are counted.
      const fs = node.infra.store;
      const slots = pLimit(3);
      let inFlight = 0;
      let most = 0;
      let submitted = 0;
      let ready: () => boolean = () => false;
      const held: (() => void)[] = [];
      const check = () => {
        if (ready()) for (const go of held.splice(0)) go();
      };
      const gate = () =>
        new Promise<void>((resolve, reject) => {
          held.push(resolve);
          check();
          setTimeout(() => reject(new Error(`held with ${most} renders in flight`)), 5000).unref();
        });
      const counting = Object.assign(Object.create(Object.getPrototypeOf(fs) as object) as typeof fs, fs, {
        read: async (key: string, ...rest: [number, ((size: number) => Buffer)?]) => {
          most = Math.max(most, ++inFlight);
          await gate();
          return fs.read(key, ...rest);
        },
        put: async (...args: Parameters<typeof fs.put>) => {
          try {
            return await fs.put(...args);
          } finally {
            inFlight--;
          }
        },
      });
      const countedSlots = Object.assign(<T>(fn: () => Promise<T>) => {
        const p = slots(fn);
        submitted++;
        check();
        return p;
      }, slots) as unknown as typeof slots;
      const run = (f: typeof files) =>
        thumbnailHandler({ store: counting, media: node.services.media, slots: countedSlots })({
          tenant: 'acme',
          hash: f[0]!.hash,
          more: f.slice(1).map((x) => x.hash),
        });
      // A lone job of three fills the three slots (one image at a time would never reach three).
      ready = () => inFlight >= 3;
      const lone = await run(files.slice(0, 3));
      expect(most).toBe(3);
      for (const f of files.slice(0, 3))
        await db().MediaFile.updateOne({ _id: f.id }, { $set: { thumbnailStatus: 'pending' } });
      // Two jobs of three and four images at once: held until all seven were handed to the slots.
      submitted = 0;
      most = 0;
      ready = () => submitted >= 7;
      const [one, two] = await Promise.all([run(files.slice(0, 3)), run(files.slice(2))]);
      expect(most).toBe(3);
      for (const r of [lone, one, two]) expect(r.status).toBe('ready');
      for (const f of files)
        expect(await record(f.id)).toMatchObject({ thumbnailStatus: 'ready', width: f.w, height: f.h });
      // The container path serves the thumbnail as WebP (its type implied by its key, decision 1188).
      const served = await node.http.get(`/files/acme/thumbnails/${files[5]!.hash}.webp`, {
        tenant: 'acme',
        token: clinician,
      });
      expect(served.status).toBe(200);
      expect(served.headers['content-type']).toBe('image/webp');
    });

    it('makes a thumbnail again when its record says ready but the store lost it, or the store has it but the record is pending', async () => {
      const [lost, unmarked] = await stored([
        [91, 71],
        [92, 72],
      ]);
      const run = thumbnailHandler({ store: node.infra.store, media: node.services.media, slots: pLimit(2) });
      const data = { tenant: 'acme', hash: lost!.hash, more: [unmarked!.hash] };
      await run(data);
      await node.infra.store.delete(layout.thumbnail('acme', lost!.hash));
      await db().MediaFile.updateOne({ _id: unmarked!.id }, { $set: { thumbnailStatus: 'pending' } });
      expect(await run(data)).toEqual({
        status: 'ready',
        thumbnails: [
          { hash: lost!.hash, status: 'ready', width: 91, height: 71 },
          { hash: unmarked!.hash, status: 'ready', width: 92, height: 72 },
        ],
      });
      expect(await node.infra.store.head(layout.thumbnail('acme', lost!.hash))).toMatchObject({
        contentType: 'image/webp',
      });
      expect(await run(data)).toEqual({
        status: 'skipped',
        thumbnails: [
          { hash: lost!.hash, status: 'skipped' },
          { hash: unmarked!.hash, status: 'skipped' },
        ],
      });
    });
  });

  describe('thumbnail sources in memory (decision 1189)', () => {
    const record = async (id: string) => db().MediaFile.findById(id).lean();
    /** An upload whose thumbnail job finished, its record set back to pending and its thumbnail removed. */
    const uploaded = async (fileName: string, content: Buffer) => {
      const up = await post('/api/media/upload', clinician, [{ name: 'file', file: { fileName, content } }]);
      expect(up.status).toBe(201);
      await node.infra.queues.waitUntilFinished('thumbnail', `thumbnail.acme.${up.body.data.hash}`);
      await db().MediaFile.updateOne({ _id: up.body.data.id }, { $set: { thumbnailStatus: 'pending' } });
      await node.infra.store.delete(layout.thumbnail('acme', up.body.data.hash));
      return up.body.data as { id: string; hash: string };
    };
    const thumbnailSize = async (hash: string) => {
      const { body } = await node.infra.store.get(layout.thumbnail('acme', hash));
      const chunks: Buffer[] = [];
      for await (const c of body) chunks.push(c as Buffer);
      const { width, height } = await sharp(Buffer.concat(chunks)).metadata();
      return [width, height];
    };

    it("reads the sources of a burst into the node's buffers, each filled again by the next image, each thumbnail its own", async () => {
      const sizes: [number, number][] = [
        [111, 71],
        [112, 72],
        [113, 73],
        [114, 74],
        [115, 75],
        [116, 76],
      ];
      const files: { id: string; hash: string }[] = [];
      for (const [w, h] of sizes) files.push(await uploaded(`m${w}.png`, await png(w, h)));
      // Every buffer the reads were given, by its memory: two slots need two, six images reuse them.
      const fs = node.infra.store;
      const memories = new Set<ArrayBufferLike>();
      let reads = 0;
      const track = (b: Buffer) => (memories.add(b.buffer), b);
      const watching = Object.assign(Object.create(Object.getPrototypeOf(fs) as object) as typeof fs, fs, {
        read: (key: string, max: number, into?: (size: number) => Buffer) => {
          reads++;
          return fs.read(key, max, into && ((size) => track(into(size))));
        },
      });
      // A buffer handed back is at once written over, as the next read would: one handed back while libvips
      // still needs it fails that image.
      const buffers = new (class extends SourceBuffers {
        override give(view: Buffer): void {
          view.fill(0);
          super.give(view);
        }
      })(IN_MEMORY_SOURCE_BYTES, 2);
      const run = thumbnailHandler({ store: watching, media: node.services.media, slots: pLimit(2), buffers });
      const result = await run({ tenant: 'acme', hash: files[0]!.hash, more: files.slice(1).map((f) => f.hash) });
      expect(result.thumbnails).toEqual(
        files.map((f, i) => ({ hash: f.hash, status: 'ready', width: sizes[i]![0], height: sizes[i]![1] })),
      );
      expect(reads).toBe(6);
      expect(memories.size).toBe(2);
      expect(buffers.kept).toBe(2);
      for (const [i, f] of files.entries()) {
        expect(await record(f.id)).toMatchObject({
          thumbnailStatus: 'ready',
          width: sizes[i]![0],
          height: sizes[i]![1],
        });
        expect(await thumbnailSize(f.hash)).toEqual(sizes[i]);
      }
    });

    it('records the dimensions a JPEG header states before its EXIF rotation, as libvips reads them, and decodes a source above the bound from its path', async () => {
      const jpeg = await sharp(await png(120, 80))
        .jpeg()
        .withMetadata({ orientation: 6 })
        .toBuffer();
      expect(await sharp(jpeg).metadata()).toMatchObject({ width: 120, height: 80, orientation: 6 });
      const up = await uploaded('turned.jpg', jpeg);
      const fs = node.infra.store;
      const located: string[] = [];
      const locating = Object.assign(Object.create(Object.getPrototypeOf(fs) as object) as typeof fs, fs, {
        localFile: (key: string, max: number) => (located.push(key), fs.localFile!(key, max)),
      });
      // In memory: the header's dimensions; the thumbnail turned upright.
      const inMemory = thumbnailHandler({ store: locating, media: node.services.media });
      expect(await inMemory({ tenant: 'acme', hash: up.hash })).toEqual({ status: 'ready', width: 120, height: 80 });
      expect(located).toEqual([]);
      expect(await thumbnailSize(up.hash)).toEqual([80, 120]);
      // Above the bound: decoded from its path, with the same dimensions and thumbnail.
      await db().MediaFile.updateOne({ _id: up.id }, { $set: { thumbnailStatus: 'pending' } });
      await fs.delete(layout.thumbnail('acme', up.hash));
      const fromPath = thumbnailHandler({ store: locating, media: node.services.media, inMemoryBytes: 64 });
      expect(await fromPath({ tenant: 'acme', hash: up.hash })).toEqual({ status: 'ready', width: 120, height: 80 });
      expect(located).toEqual([layout.media('acme', up.hash)]);
      expect(await thumbnailSize(up.hash)).toEqual([80, 120]);
      expect(await record(up.id)).toMatchObject({ thumbnailStatus: 'ready', width: 120, height: 80 });
    });
  });

  describe('pending-user import', () => {
    const rows = [
      ['Username', 'E-mail', 'Display name', 'Role'],
      ['nurse.one', 'one@clinic.org', 'Nurse One', 'clinician'],
      ['Patient.Two', '', 'Patient Two', 'Patient'],
      ['x', 'x@clinic.org', 'Too Short', 'patient'],
      ['three', 'not-an-email', 'Three', 'patient'],
      ['four', 'four@clinic.org', '', 'patient'],
      ['five', 'five@clinic.org', 'Five', 'wizard'],
      ['nurse.one', 'dup@clinic.org', 'Duplicate', 'clinician'],
      ['carl', 'carl@clinic.org', 'Existing User', 'clinician'],
      ['six', 'six@clinic.org', 'Six', 'guest'],
    ];
    /**
     * The sheet above with each test's own username prefix, so no test depends on the rows another
     * left pending ('x' stays too short and 'carl' stays an existing user).
     */
    const rowsFor = (p: string) =>
      rows.map((r, i) => (i === 0 || r[0] === 'x' || r[0] === 'carl' ? r : [`${p}${r[0]}`, ...r.slice(1)]));
    const pendingOf = (p: string) => ({ username: new RegExp(`^${p}`) });
    const expectedErrors = [
      { row: 4, field: 'username' },
      { row: 5, field: 'email' },
      { row: 6, field: 'displayName' },
      { row: 7, field: 'role' },
      { row: 8, field: 'username' },
      { row: 9, field: 'username' },
    ];

    const runImport = async (content: Buffer, fileName = 'users.xlsx', timeoutMs = 30_000) => {
      const up = await post('/api/uploads/pendingUsers', admin, sheetPart(fileName, content));
      expect(up.status).toBe(202);
      const job = await node.infra.queues.waitUntilFinished(
        'pending-user-import',
        `import.acme.${up.body.importId}`,
        timeoutMs,
      );
      const status = await node.http.get(`/api/uploads/pendingUsers/${up.body.importId}`, {
        tenant: 'acme',
        token: admin,
      });
      return { up, job, status };
    };

    it('imports good rows and reports each bad row', async () => {
      const { up, job, status } = await runImport(await xlsx(rowsFor('ga')));
      expect(up.body).toMatchObject({ status: 'queued', fileName: 'users.xlsx' });
      expect(job.state).toBe('completed');
      expect(job.progress).toEqual({ done: 9, imported: 3, errors: 6 });
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({
        status: 'completed',
        rowsTotal: 9,
        rowsDone: 9,
        rowsImported: 3,
        rowErrorCount: 6,
      });
      expect(
        status.body.rowErrors.map((e: { row: number; field: string }) => ({ row: e.row, field: e.field })),
      ).toEqual(expectedErrors);
      expect(status.body.rowErrors[4].message).toBe('duplicate of row 2');
      expect(status.body.rowErrors[5].message).toBe('already a user of the tenant');
      const pending = await db().PendingUser.find(pendingOf('ga')).sort({ username: 1 }).lean();
      expect(pending.map((p) => [p.username, p.role, p.email ?? null, p.rowNumber])).toEqual([
        ['ganurse.one', 'clinician', 'one@clinic.org', 2],
        ['gapatient.two', 'patient', null, 3],
        ['gasix', 'guest', 'six@clinic.org', 10],
      ]);
    });

    it("finds the existing users alike whether the tenant's usernames are read once or per batch", async () => {
      // acme has a handful of users: held at the default, looked up per batch at 0 or 1.
      for (const [i, held] of [0, 1, 10_000].entries()) {
        const put = await node.infra.store.putContentAddressed(
          't/acme/imports',
          Readable.from([await xlsx(rowsFor(`eu${i}`))]),
        );
        const id = `7a0c2e4f-1b3d-4c5e-8f70-${String(i).padStart(12, '0')}`;
        await new ImportRepository(node.infra.mongo.tenantDb('acme')).create({
          id,
          fileHash: put.sha256,
          fileName: 'existing.xlsx',
          requestedBy: '6740a6f2c0b2a1e4d3c2b1a0',
        });
        await importService(undefined, held).run({ tenant: 'acme', importId: id });
        const rec = await db().Import.findById(id).lean();
        expect({ held, errors: rec?.rowErrors.map((e) => [e.row, e.field, e.message]) }).toEqual({
          held,
          errors: expect.arrayContaining([[9, 'username', 'already a user of the tenant']]),
        });
        expect(rec).toMatchObject({ status: 'completed', rowsImported: 3, rowErrorCount: 6 });
      }
    });

    it('upserts by username: importing the sheet again duplicates nothing', async () => {
      const first = await runImport(await xlsx(rowsFor('gb')));
      expect(first.status.body).toMatchObject({ status: 'completed', rowsImported: 3, rowErrorCount: 6 });
      const { status } = await runImport(await xlsx(rowsFor('gb')));
      expect(status.body).toMatchObject({ status: 'completed', rowsImported: 3, rowErrorCount: 6 });
      expect(await db().PendingUser.countDocuments(pendingOf('gb'))).toBe(3);
      expect((await db().PendingUser.findOne({ username: 'gbsix' }).lean())?.importId).toBe(status.body.importId);
    });

    it('a later import updates the rows already pending, keeping their status and creation time', async () => {
      await runImport(await xlsx(rowsFor('gc')));
      const before = await db().PendingUser.findOne({ username: 'gcsix' }).lean();
      const { status } = await runImport(
        await xlsx([
          rows[0]!,
          ['gcsix', 'Six.New@Clinic.org', 'Six Renamed', 'patient'],
          ['gcseven', 'Seven@Clinic.org', 'Seven', 'patient'],
        ]),
      );
      expect(status.body).toMatchObject({ status: 'completed', rowsImported: 2 });
      const six = await db().PendingUser.findOne({ username: 'gcsix' }).lean();
      expect(six).toMatchObject({
        displayName: 'Six Renamed',
        role: 'patient',
        email: 'six.new@clinic.org',
        importId: status.body.importId,
        rowNumber: 2,
        status: 'pending',
      });
      expect(six?.createdAt).toEqual(before?.createdAt);
      expect(six!.updatedAt!.getTime()).toBeGreaterThan(before!.updatedAt!.getTime());
      const seven = await db().PendingUser.findOne({ username: 'gcseven' }).lean();
      expect(seven).toMatchObject({ email: 'seven@clinic.org', status: 'pending', rowNumber: 3 });
      expect(seven?.createdAt).toBeInstanceOf(Date);
      expect(await db().PendingUser.countDocuments({ username: 'gcsix' })).toBe(1);
    });

    it('re-runs a job interrupted mid-way to the same report and rows', async () => {
      const { status } = await runImport(
        await xlsx([rows[0]!, ['gdseven', '', 'Seven', 'patient'], ['x', '', 'Bad', 'patient']]),
      );
      const id = status.body.importId;
      await db().Import.updateOne({ _id: id }, { $set: { status: 'running', rowsDone: 1, rowsImported: 1 } });
      const service = importService();
      expect(await service.run({ tenant: 'acme', importId: id })).toEqual({
        rowsTotal: 2,
        rowsImported: 1,
        rowErrors: 1,
      });
      const again = await node.http.get(`/api/uploads/pendingUsers/${id}`, { tenant: 'acme', token: admin });
      expect(again.body).toMatchObject({ status: 'completed', rowsDone: 2, rowsImported: 1, rowErrorCount: 1 });
      expect(again.body.rowErrors).toHaveLength(1);
      expect(await db().PendingUser.countDocuments({ username: 'gdseven' })).toBe(1);
    });

    // Decision 1180: no set of the sheet's usernames is held; a repeat in a later batch (the import
    // writes 1,000 rows a batch) is found by the unique index, and again when the job runs a second time.
    it('reports a username repeated a batch later as a duplicate of its first row, and again on a re-run', async () => {
      const sheet = await xlsxOf(['username', 'email', 'display name', 'role'], 1_003, (i) => [
        i === 1_001 ? 'gkrep0' : i === 1_002 ? 'gkrep499' : `gkrep${i}`,
        '',
        `Rep ${i}`,
        'patient',
      ]);
      const { status } = await runImport(sheet, 'repeats.xlsx');
      const expected = {
        status: 'completed',
        rowsDone: 1_003,
        rowsImported: 1_001,
        rowErrorCount: 2,
        rowErrors: [
          { row: 1_003, field: 'username', message: 'duplicate of row 2' },
          { row: 1_004, field: 'username', message: 'duplicate of row 501' },
        ],
      };
      expect(status.body).toMatchObject(expected);
      const id = status.body.importId;
      await db().Import.updateOne({ _id: id }, { $set: { status: 'running' } });
      expect(await importService().run({ tenant: 'acme', importId: id })).toEqual({
        rowsTotal: 1_003,
        rowsImported: 1_001,
        rowErrors: 2,
      });
      const again = await node.http.get(`/api/uploads/pendingUsers/${id}`, { tenant: 'acme', token: admin });
      expect(again.body).toMatchObject(expected);
      expect(await db().PendingUser.countDocuments({ username: /^gkrep/ })).toBe(1_001);
      expect(
        await db().PendingUser.findOne({ username: 'gkrep499' }, { _id: 0, rowNumber: 1, displayName: 1 }).lean(),
      ).toEqual({
        rowNumber: 501,
        displayName: 'Rep 499',
      });
    });

    it('refuses what is not an xlsx workbook at upload', async () => {
      const csv = await post(
        '/api/uploads/pendingUsers',
        admin,
        sheetPart('users.csv', Buffer.from('username,role\n')),
      );
      expect(csv.status).toBe(415);
      expect(csv.body.code).toBe('file_type_not_allowed');
      const fake = await post('/api/uploads/pendingUsers', admin, sheetPart('users.xlsx', Buffer.from('MZ not a zip')));
      expect(fake.status).toBe(415);
      expect(fake.body.code).toBe('file_content_mismatch');
    });

    it('fails a zip bomb before inflating it, with the reason in the report', async () => {
      const bomb = zipOf([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(20 * 1024 * 1024) }]);
      expect(bomb.length).toBeLessThan(100_000);
      const { job, status } = await runImport(bomb, 'bomb.xlsx');
      expect(job.state).toBe('failed');
      expect(job.attemptsMade).toBe(1);
      expect(status.body).toMatchObject({ status: 'failed' });
      expect(status.body.error).toMatch(/zip bomb/);
    });

    it('fails a workbook whose parts cannot be parsed, without retrying', async () => {
      const garbage = zipOf([
        { name: '[Content_Types].xml', data: Buffer.from('<Types><<<not xml') },
        {
          name: 'xl/workbook.xml',
          data: Buffer.from('<workbook><sheets><sheet name="a" sheetId="1" r:id="rId1"/></sheets>'),
        },
        {
          name: 'xl/worksheets/sheet1.xml',
          data: Buffer.from(
            '<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>username</t></is></c></row><row r="2"><c',
          ),
        },
      ]);
      const { job, status } = await runImport(garbage, 'garbage.xlsx');
      expect(job.state).toBe('failed');
      expect(job.attemptsMade).toBe(1);
      expect(status.body.status).toBe('failed');
      expect(status.body.error).toBeTruthy();
    });

    it('fails a sheet without the required columns', async () => {
      const { status } = await runImport(
        await xlsx([
          ['Name', 'Email'],
          ['A', 'a@b.org'],
        ]),
      );
      expect(status.body.status).toBe('failed');
      expect(status.body.error).toMatch(/username.*role/);
    });

    it('stops at the row and column limits while streaming', async () => {
      const many = await xlsx([
        rows[0]!,
        ...Array.from({ length: 20 }, (_, i) => [`user${i}`, '', `User ${i}`, 'patient']),
      ]);
      const range = async (start: number, end: number) => Readable.from([many.subarray(start, end + 1)]);
      const book = await openWorkbook(range, many.length, DEFAULT_SPREADSHEET_LIMITS);
      const read = async (limits: { maxRows: number; maxColumns: number }) => {
        let n = 0;
        const all = { ...DEFAULT_SPREADSHEET_LIMITS, ...limits };
        for await (const group of readPendingUserSheetChunks(book, all)) n += group.length;
        return n;
      };
      expect(await read({ maxRows: 100, maxColumns: 10 })).toBe(20);
      await expect(read({ maxRows: 5, maxColumns: 10 })).rejects.toMatchObject({ code: 'spreadsheet_rejected' });
      await expect(read({ maxRows: 100, maxColumns: 3 })).rejects.toMatchObject({ code: 'spreadsheet_rejected' });
    });

    it('streams a 100k-row sheet, upserting valid rows and capping the error report', async () => {
      const big = await xlsxOf(['username', 'email', 'display name', 'role'], 100_000, (i) => [
        `bulk${i}`,
        `bulk${i}@clinic.org`,
        `Bulk ${i}`,
        i % 100 === 0 ? 'patient' : 'wizard',
      ]);
      const { job, status } = await runImport(big, 'bulk.xlsx', 170_000);
      expect(job.state).toBe('completed');
      expect(job.progress).toEqual({ done: 100_000, imported: 1_000, errors: 99_000 });
      expect(status.body).toMatchObject({
        status: 'completed',
        rowsTotal: 100_000,
        rowsDone: 100_000,
        rowsImported: 1_000,
        rowErrorCount: 99_000,
      });
      expect(status.body.rowErrors).toHaveLength(MAX_REPORTED_ERRORS);
      expect(status.body.rowErrors[0]).toEqual({ row: 3, field: 'role', message: "unknown role 'wizard'" });
      expect(await db().PendingUser.countDocuments({ username: /^bulk/ })).toBe(1_000);
    }, 180_000);

    it('imports names in any script intact, wherever the inflated bytes split a character', async () => {
      // Thousands of multi-byte names: inflated chunk boundaries fall inside some of their characters.
      const name = (i: number) => `Zoë Müller-Łukasiewicz 李小龍 Ñandú ${i}`;
      const sheet = await xlsx([
        ['username', 'display name', 'role'],
        ...Array.from({ length: 5_000 }, (_, i) => [`intl${i}`, name(i), 'patient']),
      ]);
      const { status } = await runImport(sheet, 'names.xlsx');
      expect(status.body).toMatchObject({ status: 'completed', rowsImported: 5_000, rowErrorCount: 0 });
      const stored = await db().PendingUser.find({ username: /^intl/ }, { username: 1, displayName: 1 }).lean();
      const wrong = stored.filter((u) => u.displayName !== name(Number(String(u.username).slice(4))));
      expect({ stored: stored.length, wrong: wrong.map((u) => u.displayName) }).toEqual({ stored: 5_000, wrong: [] });
    });

    it('keeps and reports the rows read before a limit stops the sheet', async () => {
      const sheet = await xlsx([
        rows[0]!,
        ...Array.from({ length: 5 }, (_, i) => [`lim${i}`, '', `Lim ${i}`, 'patient']),
        ['', '', '', ''],
      ]);
      const put = await node.infra.store.putContentAddressed('t/acme/imports', Readable.from([sheet]));
      const id = '0b5a8a6e-8a51-4e61-9d3e-1f6d3c9a7b21';
      await new ImportRepository(node.infra.mongo.tenantDb('acme')).create({
        id,
        fileHash: put.sha256,
        fileName: 'lim.xlsx',
        requestedBy: '6740a6f2c0b2a1e4d3c2b1a0',
      });
      const service = importService({ maxRows: 3 });
      await expect(service.run({ tenant: 'acme', importId: id })).rejects.toMatchObject({
        code: 'spreadsheet_rejected',
      });
      const rec = await db().Import.findById(id).lean();
      // The sheet's rows were counted before any was read (its blank last row included: an estimate).
      expect(rec).toMatchObject({ status: 'failed', rowsTotal: 6, rowsDone: 3, rowsImported: 3 });
      expect(rec?.error).toMatch(/more than 3 rows/);
      expect(await db().PendingUser.countDocuments({ username: /^lim/ })).toBe(3);
    });

    it('writes the row count before the counters, however slow the count is beside the rows', async () => {
      // Servers that rewrite a whole document per update can lose one of two concurrent updates
      // (decision 007): the count's write and the counters' writes to the Import go one at a time.
      // Inline strings: the rows' read is of the sheet's part alone, a range the count reads first.
      const sheet = await xlsxOf(rows[0]!, 5, (i) => [`slow${i}`, '', `Slow ${i}`, 'patient']);
      const put = await node.infra.store.putContentAddressed('t/acme/imports', Readable.from([sheet]));
      const id = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';
      await new ImportRepository(node.infra.mongo.tenantDb('acme')).create({
        id,
        fileHash: put.sha256,
        fileName: 'slow.xlsx',
        requestedBy: '6740a6f2c0b2a1e4d3c2b1a0',
      });
      const writes: string[] = [];
      const real = node.infra.store;
      // The count's reads wait until the rows are written (told apart by the stack: its reads are made
      // in, or awaited by, countWorksheetRows); the container's checks and the rows' own reads do not.
      let countReads = 0;
      let rowsWritten!: () => void;
      const rowsIn = new Promise<void>((r) => (rowsWritten = r));
      const store = Object.assign(Object.create(real) as typeof real, {
        get: async (key: string, range?: { start: number; end: number }) => {
          const limit = Error.stackTraceLimit;
          Error.stackTraceLimit = 100;
          const stack = new Error().stack ?? '';
          Error.stackTraceLimit = limit;
          if (stack.includes('countWorksheetRows')) {
            countReads++;
            await rowsIn;
          }
          return real.get(key, range);
        },
      });
      const service = new ImportService({
        store,
        imports: (t) => {
          const repo = new ImportRepository(node.infra.mongo.tenantDb(t));
          return Object.assign(Object.create(repo) as ImportRepository, {
            expectRows: async (importId: string, total: number) => {
              await repo.expectRows(importId, total);
              writes.push(`count ${total}`);
            },
            progress: async (...args: Parameters<ImportRepository['progress']>) => {
              writes.push('counters');
              await repo.progress(...args);
            },
          });
        },
        pendingUsers: (t) => {
          const repo = new PendingUserRepository(node.infra.mongo.tenantDb(t));
          return Object.assign(Object.create(repo) as PendingUserRepository, {
            upsertMany: async (...args: Parameters<PendingUserRepository['upsertMany']>) => {
              writes.push('rows');
              const n = await repo.upsertMany(...args);
              rowsWritten();
              return n;
            },
          });
        },
        mediaFiles: (t) => new MediaFileRepository(node.infra.mongo.tenantDb(t)),
        notify: () => undefined,
        enqueueImport: async () => undefined,
      });
      await service.run({ tenant: 'acme', importId: id });
      expect(countReads).toBe(2); // the part's local header, then its data
      expect(writes).toEqual(['rows', 'count 5', 'counters']);
      expect(await db().Import.findById(id).lean()).toMatchObject({
        status: 'completed',
        rowsTotal: 5,
        rowsImported: 5,
      });
    });

    it('needs users:import and answers unknown imports with 404', async () => {
      const r = await post('/api/uploads/pendingUsers', clinician, sheetPart('users.xlsx', await xlsx(rows)));
      expect(r.status).toBe(403);
      const missing = await node.http.get('/api/uploads/pendingUsers/6f1c1a52-3f0e-4b51-9a4e-9d1c7c1d2e3f', {
        tenant: 'acme',
        token: admin,
      });
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('import_not_found');
      const bad = await node.http.get('/api/uploads/pendingUsers/not-an-id', { tenant: 'acme', token: admin });
      expect(bad.status).toBe(400);
    });
  });
});
