import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import os from 'node:os';
import { MongoClient } from 'mongodb';
import { dedicatedMongoJavaServer, type DedicatedService } from '../../support/dedicated-services.js';

/**
 * The embedded default (mongo-java-server, H2 backend) answers every connection while one collection is
 * busy (decision 985). mongo-java-server runs a query with its collection locked, and its own network
 * set-up ran each command on the event loop owning the connection (2 x cores threads for all
 * connections): a few slow queries of one collection held every loop, each waiting for the lock, and
 * the connections on those loops got no answer, the driver's monitor among them (its `hello` timed out
 * at 100,000 users, the driver failed every operation in flight: docs/performance.md). The launcher
 * runs each connection's commands on a thread of its own, so a ping from another connection is
 * answered while the collection's queries queue.
 *
 * The slow queries are counts with a regular expression that backtracks (about 0.2 s a document in
 * Java's matcher), so two documents make each query long without seeding a large collection; they hold
 * their threads by running, as a large scan does (or by waiting for a collection's lock). The check is
 * an order of events, not a time: with the event loops shared, no second ping can be answered before
 * the first query ends (the pinging connection's loop is held by a query).
 */
describe('embedded default: long queries do not hold other connections', () => {
  let server: DedicatedService;

  beforeAll(async () => {
    server = await dedicatedMongoJavaServer('h2');
  }, 180_000);
  afterAll(async () => server?.destroy());

  it('answers pings on another connection while long queries run on every other connection', async () => {
    // More query connections than the event loops the server's own set-up had (2 x cores), each of
    // which then holds one query: every loop is busy, whatever loop the pinging connection landed on.
    const queries = Math.max(8, 4 * os.availableParallelism());
    const opts = { serverSelectionTimeoutMS: 60_000, heartbeatFrequencyMS: 60_000 };
    const pinger = await new MongoClient(server.url, { ...opts, maxPoolSize: 1 }).connect();
    const client = await new MongoClient(server.url, { ...opts, maxPoolSize: queries, minPoolSize: queries }).connect();
    try {
      const docs = client.db('busy').collection<{ _id: number; s: string }>('docs');
      await docs.insertMany(Array.from({ length: 2 }, (_, i) => ({ _id: i, s: `${'a'.repeat(22)}!` })));
      await pinger.db('admin').command({ ping: 1 });
      // Every query connection open (and so placed on its loop) before the queries start.
      await Promise.all(Array.from({ length: queries }, () => docs.findOne({ _id: 0 })));

      let firstQueryDone = false;
      let pingsBefore = 0;
      const slow = Promise.all(
        Array.from({ length: queries }, async () => {
          await docs.countDocuments({ s: { $regex: '(.*a){10}$' } });
          firstQueryDone = true;
        }),
      );
      while (!firstQueryDone && pingsBefore < 20) {
        await pinger.db('admin').command({ ping: 1 });
        if (!firstQueryDone) pingsBefore++;
      }
      await slow;
      expect(firstQueryDone).toBe(true);
      expect(pingsBefore).toBeGreaterThanOrEqual(5);
    } finally {
      await client.close(true);
      await pinger.close(true);
    }
  }, 240_000);
});
