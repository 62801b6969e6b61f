import os from 'node:os';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import mongoose from 'mongoose';
import { projectRoot } from './paths.js';
import { treeState } from './tree.js';

const PACKAGES = [
  'socket.io',
  'socket.io-client',
  '@socket.io/redis-adapter',
  '@socket.io/redis-streams-adapter',
  'express',
  'mongoose',
  'ioredis',
  'bullmq',
  'sharp',
  'exceljs',
  '@grpc/grpc-js',
  '@aws-sdk/client-s3',
  'zod',
  'tsx',
];

function packageVersion(name: string): string {
  try {
    return JSON.parse(readFileSync(path.join(projectRoot, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return 'absent';
  }
}

async function serverVersions(
  redisUrl: string,
  mongo: { embedded: string; test: string },
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    out.redis = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? 'unknown';
  } catch (e) {
    out.redis = `unreachable: ${(e as Error).message}`;
  } finally {
    redis.disconnect();
  }
  for (const [role, uri] of Object.entries(mongo)) {
    const conn = mongoose.createConnection(uri, { serverSelectionTimeoutMS: 3000 });
    const key = role === 'embedded' ? 'mongodb_protocol' : `mongodb_protocol_${role}`;
    try {
      await conn.asPromise();
      const info = await conn.db!.admin().command({ buildInfo: 1 });
      out[key] =
        `${info.version}${info.ferretdbVersion ? ` (FerretDB ${info.ferretdbVersion})` : ''} at ${new URL(uri).host}`;
    } catch (e) {
      out[key] = `unreachable: ${(e as Error).message}`;
    } finally {
      await conn.close().catch(() => undefined);
    }
  }
  return out;
}

/** The machine, software versions and load the results were measured with. */
export async function describeMachine(redisUrl: string, mongo: { embedded: string; test: string }) {
  const tree = treeState(projectRoot);
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryMiB: Math.round(os.totalmem() / 2 ** 20),
    freeMemoryMiB: Math.round(os.freemem() / 2 ** 20),
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
    /** BENCH_DB_CPUS: the CPUs the run's database servers had to themselves (the rest ran everything else); absent when shared. */
    ...(process.env.BENCH_DB_CPUS
      ? { databaseCpus: process.env.BENCH_DB_CPUS, otherCpus: process.env.BENCH_OTHER_CPUS }
      : {}),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    /** The full hash of the commit measured, and what the tree had changed from it (empty for latest.*). */
    commit: tree.commit,
    treeChanges: tree.changes,
    servers: {
      ...(await serverVersions(redisUrl, mongo)),
      ...(process.env.BENCH_MONGODB_URI
        ? { mongodb_kind: 'external (BENCH_MONGODB_URI)' }
        : {
            mongodb_kind:
              'embedded default: mongo-java-server H2, commit per write, fresh file; test server: mongo-java-server memory; both private to the run',
          }),
    },
    packages: Object.fromEntries(PACKAGES.map((p) => [p, packageVersion(p)])),
  };
}
