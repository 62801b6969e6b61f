import { afterEach, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import { dedicatedMongoJavaServer, type DedicatedService } from '../../support/dedicated-services.js';
import { listenerPid } from '../../../scripts/ports.mjs';

/**
 * The tests' MongoDB-protocol server is kept running between runs (port 27028, shared by the checkouts of
 * a machine). A server started before the launcher's source changed went on serving the old launcher, so a
 * developer's suite could pass or fail against code it no longer has (decision 1177). `ensureTestMongo`
 * now asks the server which launcher it runs (`launcherInfo`: the digest of MongoJavaServerLauncher.java
 * it was started with) and starts it again from this checkout's when it differs and nobody is connected.
 * Each test plays the kept server with a private one on its own port.
 */
describe('the kept test server runs the checkout launcher (decision 1177)', () => {
  let old: DedicatedService | undefined;
  /** The old server's own process (DedicatedService keeps it to itself). */
  let oldPid: number | undefined;

  afterEach(async () => {
    // A server ensureTestMongo started in the old one's place is a daemon of its own: stopped by its pid
    // (whatever the outcome of the test, so that no run leaves one behind).
    const listening = old ? listenerPid(old.port) : undefined;
    if (listening && listening !== oldPid) process.kill(listening, 'SIGTERM');
    await old?.destroy();
    old = undefined;
    oldPid = undefined;
  });

  // @ts-expect-error plain ESM script without types
  const services = () => import('../../../scripts/services.mjs');

  const launcherOf = async (port: number): Promise<string> => {
    const client = await new MongoClient(`mongodb://127.0.0.1:${port}/`, {
      serverSelectionTimeoutMS: 30_000,
    }).connect();
    try {
      return String((await client.db('admin').command({ launcherInfo: 1 })).launcher);
    } finally {
      await client.close();
    }
  };

  it('a server of another launcher that nobody uses is started again from this one', async () => {
    const { ensureTestMongo, launcherDigest } = await services();
    old = await dedicatedMongoJavaServer('memory', ['-Dlauncher.source=an-earlier-launcher']);
    const before = (oldPid = listenerPid(old.port));
    expect(await launcherOf(old.port)).toBe('an-earlier-launcher');

    await ensureTestMongo(old.port);
    const started = listenerPid(old.port);
    expect(started).toBeDefined();
    expect(started).not.toBe(before);
    expect(await launcherOf(old.port)).toBe(launcherDigest());
    // The new server serves: a write and a read through it.
    const client = await new MongoClient(`mongodb://127.0.0.1:${old.port}/`).connect();
    try {
      await client
        .db('launcher_check')
        .collection('c')
        .insertOne({ _id: 1 } as never);
      expect(await client.db('launcher_check').collection('c').countDocuments()).toBe(1);
    } finally {
      await client.close();
    }
  }, 180_000);

  it('a server of another launcher that a run is using is left as it is', async () => {
    const { ensureTestMongo } = await services();
    old = await dedicatedMongoJavaServer('memory', ['-Dlauncher.source=an-earlier-launcher']);
    const before = (oldPid = listenerPid(old.port));
    const user = await new MongoClient(`mongodb://127.0.0.1:${old.port}/`).connect();
    try {
      await user.db('admin').command({ ping: 1 });
      await ensureTestMongo(old.port);
      expect(listenerPid(old.port)).toBe(before);
      await user.db('admin').command({ ping: 1 });
    } finally {
      await user.close();
    }
    expect(await launcherOf(old.port)).toBe('an-earlier-launcher');
  }, 180_000);

  it("a server of this checkout's launcher is kept", async () => {
    const { ensureTestMongo, launcherDigest } = await services();
    old = await dedicatedMongoJavaServer('memory');
    const before = (oldPid = listenerPid(old.port));
    expect(await launcherOf(old.port)).toBe(launcherDigest());
    await ensureTestMongo(old.port);
    expect(listenerPid(old.port)).toBe(before);
  }, 180_000);
});
