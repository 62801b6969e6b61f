/**
 * Baseline of B7: a bare HTTP server that pipes the raw request body into the same object store
 * driver the product uses (content-addressed put: hashing and the store's own write path), with no
 * multipart parsing, auth, validation, magic-byte check or database record.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config/config.js';
import { createObjectStore } from '../../src/storage/index.js';
import type { Hosted } from '../harness/host.js';

export async function start(p: { env: Record<string, string> }): Promise<Hosted> {
  const store = await createObjectStore(loadConfig(p.env).storage);
  const server = http.createServer((req, res) => {
    store.putContentAddressed('bench-raw', req, { contentType: 'application/octet-stream' }).then(
      (r) => res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(r)),
      (e: Error) => res.writeHead(500).end(e.message),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    info: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
    calls: { remove: async (a: { key: string }) => store.delete(a.key) },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
