/**
 * Baseline of B6: a bare Express route running the same MongoDB query as the product's contact search
 * (UserRepository.search: active users whose sortName or username contains the name, sorted by
 * sortName then _id, skip/take) on the same database, answering the rows as JSON. No auth, no tenant
 * resolution, no presence, no presenter.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import mongoose from 'mongoose';
import type { Hosted } from '../harness/host.js';

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export async function start(p: { mongoUri: string; db: string }): Promise<Hosted> {
  const conn = await mongoose.createConnection(p.mongoUri, { maxPoolSize: 50 }).asPromise();
  const users = conn.useDb(p.db).collection('users');
  const app = express();
  app.get('/api/contacts/get', async (req, res) => {
    const name = String(req.query.name ?? '');
    const skip = Number(req.query.skip ?? 0);
    const take = Number(req.query.take ?? 20);
    const filter: Record<string, unknown> = { status: 'active' };
    if (name) {
      const re = new RegExp(escapeRegex(name.toLowerCase()));
      filter.$or = [{ sortName: re }, { username: re }];
    }
    const rows = await users.find(filter).sort({ sortName: 1, _id: 1 }).skip(skip).limit(take).toArray();
    res.json(rows);
  });
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    info: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await conn.close();
    },
  };
}
