/**
 * Baseline of B6 and B11: the bare queries. A bare Express server on its own connection pool that
 * answers the contact search and a clinician's event list by issuing exactly the product's database
 * queries (the product's own UserRepository / EventRepository: the page and the capped count, in
 * parallel, as the services do) and answering the rows as JSON: no tenant resolution, token, permission,
 * validation, presence, favourites or presenter. The `rate` call issues the same queries in this process
 * with no HTTP at all: the database's own rate for them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Types } from 'mongoose';
import { Mongo } from '../../src/data/mongo.js';
import { UserRepository } from '../../src/data/repositories/user.repository.js';
import { EventRepository } from '../../src/data/repositories/event.repository.js';
import { TOTAL_COUNT_CAP } from '../../src/core/directory/contact.service.js';
import type { Hosted } from '../harness/host.js';

interface Params {
  mongoUri: string;
  catalogDb: string;
  tenantDbPrefix: string;
  tenant: string;
  /** The searcher (left out of contact results) or the clinician whose events are listed. */
  userId: string;
}

export async function start(p: Params): Promise<Hosted> {
  const mongo = await Mongo.connect({
    uri: p.mongoUri,
    catalogDb: p.catalogDb,
    tenantDbPrefix: p.tenantDbPrefix,
    timeoutMs: 10_000,
  });
  const users = new UserRepository(mongo.tenantDb(p.tenant));
  const events = new EventRepository(mongo.tenantDb(p.tenant));
  const me = new Types.ObjectId(p.userId);
  const contacts = async (q: URLSearchParams) => {
    const name = q.get('name') || undefined;
    const skip = Number(q.get('skip') ?? 0);
    const take = Number(q.get('take') ?? 20);
    const [items, total] = await Promise.all([
      users.search({ name, excludeId: me, skip, take }),
      users.count({ name, excludeId: me }, TOTAL_COUNT_CAP),
    ]);
    return { items, total };
  };
  const eventList = async (q: URLSearchParams) => {
    const name = q.get('name') || undefined;
    const skip = Number(q.get('skip') ?? 0);
    const take = Number(q.get('take') ?? 20);
    const [items, total] = await Promise.all([events.list(me, { name, skip, take }), events.count(me, name)]);
    return { items, total };
  };
  const query = (path: string) => {
    const u = new URL(path, 'http://x');
    if (u.pathname === '/api/contacts/get') return contacts(u.searchParams);
    if (u.pathname === '/api/events/get') return eventList(u.searchParams);
    throw new Error(`no bare query for ${u.pathname}`);
  };
  const app = express();
  app.get(['/api/contacts/get', '/api/events/get'], (req, res, next) => {
    query(req.originalUrl).then((r) => res.json(r), next);
  });
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    info: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
    calls: {
      /** The same paths' queries, `concurrency` in flight for `durationMs`, in process: queries per second. */
      async rate(a: { paths: string[]; concurrency: number; durationMs: number }) {
        let n = 0;
        const t0 = performance.now();
        const until = t0 + a.durationMs;
        await Promise.all(
          Array.from({ length: a.concurrency }, async () => {
            while (performance.now() < until) await query(a.paths[n++ % a.paths.length]!);
          }),
        );
        return { per_s: (n / (performance.now() - t0)) * 1000, done: n };
      },
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await mongo.close();
    },
  };
}
