import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, verified with the reference Standard Webhooks verifier. */
export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  payload: { type: string; timestamp: string; sequence: string; data: Record<string, unknown> };
  /** Whether the signature verified with the receiver's current secrets. */
  verified: boolean;
  /** Status the receiver answered. */
  status: number;
}

/** What the receiver answers to request number `n` (0-based): a status, or 'hold' to keep it open. */
export type Answer = (n: number, r: Received) => number | 'hold';

/**
 * A webhook endpoint in the test process: verifies every request's signature with the
 * `standardwebhooks` reference library (not the service's signer), records it, and answers as told.
 * `until` resolves once a predicate over everything received holds (no polling: checked per request).
 */
export async function startReceiver(opts: { secrets?: string[]; answer?: Answer } = {}) {
  const received: Received[] = [];
  const held: http.ServerResponse[] = [];
  let secrets = opts.secrets ?? [];
  let answer: Answer = opts.answer ?? (() => 204);
  const waiters: { test: (r: Received[]) => boolean; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters])
      if (w.test(received)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      const verified =
        secrets.length > 0 &&
        secrets.every((s) => {
          try {
            new Webhook(s).verify(body, headers);
            return true;
          } catch {
            return false;
          }
        });
      const r: Received = {
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body,
        payload: JSON.parse(body),
        verified,
        status: 0,
      };
      const a = answer(received.length, r);
      r.status = a === 'hold' ? 0 : a;
      received.push(r);
      if (a === 'hold') held.push(res);
      else res.writeHead(a).end();
      check();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    setSecrets(s: string[]) {
      secrets = s;
    },
    setAnswer(a: Answer) {
      answer = a;
    },
    /** Distinct event ids received with a 2xx answer, in first-delivery order. */
    delivered(): Received[] {
      const seen = new Set<string>();
      return received.filter((r) => r.status >= 200 && r.status < 300 && !seen.has(r.id) && seen.add(r.id));
    },
    until(test: (r: Received[]) => boolean): Promise<void> {
      return new Promise((resolve) => {
        waiters.push({ test, resolve });
        check();
      });
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
