import { afterAll, beforeAll } from '@jest/globals';
import { MongoClient } from 'mongodb';
import { dedicatedMongoJavaServer, type DedicatedService } from './dedicated-services.js';

/**
 * A private embedded server (mongo-java-server) for one describe block: started before its tests (its
 * own port and data directory), destroyed after them. `restart` stops and starts it on the same data
 * (H2 keeps its file; the memory backend starts empty) and connects again.
 */
export function privateEmbeddedServer(backend: 'h2' | 'memory', jvmOptions: string[] = []) {
  let server: DedicatedService | undefined;
  let client: MongoClient | undefined;
  const connect = async () => {
    client = await new MongoClient(server!.url, { serverSelectionTimeoutMS: 60_000 }).connect();
  };
  beforeAll(async () => {
    server = await dedicatedMongoJavaServer(backend, jvmOptions);
    await connect();
  }, 180_000);
  afterAll(async () => {
    await client?.close();
    await server?.destroy();
  });
  return {
    get client(): MongoClient {
      if (!client) throw new Error('the embedded server is not started yet (use it inside a test or a hook)');
      return client;
    },
    async restart(): Promise<void> {
      await client?.close();
      await server!.stop();
      await server!.start();
      await connect();
    },
  };
}
