import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import { dedicatedMongoJavaServer, type DedicatedService } from '../../support/dedicated-services.js';

/**
 * The embedded default of `npm start` (mongo-java-server, H2 backend) keeps every write it acknowledged
 * through a kill -9: writers insert and update documents concurrently, the server is killed right after
 * the last acknowledgement, restarted on the same file, and everything acknowledged is read back.
 * (The H2 store's own setting committed once a second and lost the last writes: decision 007.)
 */
describe('embedded default survives kill -9 with every acknowledged write', () => {
  let server: DedicatedService;

  // The first run on a machine fetches mongo-java-server, and a JVM boots slowly on a loaded machine:
  // a beforeAll cut short by jest's timeout would leave the server starting behind the file.
  beforeAll(async () => {
    server = await dedicatedMongoJavaServer('h2');
  }, 180_000);
  afterAll(async () => server?.destroy());

  const connect = () => new MongoClient(server.url, { serverSelectionTimeoutMS: 60_000, maxPoolSize: 8 }).connect();

  it('reads back every acknowledged insert and update after SIGKILL and restart', async () => {
    const writers = 8;
    const perWriter = 40;
    let client = await connect();
    const docs = client.db('durable').collection<{ _id: string; w: number; n: number; v: number }>('docs');
    await docs.createIndex({ w: 1, n: 1 }, { unique: true });
    const acked: string[] = [];
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let n = 0; n < perWriter; n++) {
          const _id = `${w}:${n}`;
          await docs.insertOne({ _id, w, n, v: 0 });
          await docs.updateOne({ _id }, { $set: { v: 1 } });
          acked.push(_id);
        }
      }),
    );
    // The very last acknowledged writes: a batch insert and an update, then the kill at once.
    await docs.insertMany(Array.from({ length: 50 }, (_, n) => ({ _id: `last:${n}`, w: -1, n, v: 1 })));
    await docs.updateOne({ _id: '0:0' }, { $set: { v: 2 } });
    await server.kill();
    await client.close(true);

    await server.start();
    client = await connect();
    const after = client.db('durable').collection<{ _id: string; v: number }>('docs');
    const stored = new Map((await after.find({}).toArray()).map((d) => [d._id, d.v]));
    expect(acked).toHaveLength(writers * perWriter);
    expect(acked.filter((id) => !stored.has(id))).toEqual([]);
    expect(acked.filter((id) => id !== '0:0' && stored.get(id) !== 1)).toEqual([]);
    expect(stored.get('0:0')).toBe(2);
    expect(Array.from({ length: 50 }, (_, n) => stored.get(`last:${n}`))).toEqual(Array(50).fill(1));
    // The unique index came back too.
    await expect(after.insertOne({ _id: 'again', w: 0, n: 0, v: 0 } as never)).rejects.toMatchObject({ code: 11000 });
    await client.close();
  }, 300_000);
});
