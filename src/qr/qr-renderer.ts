import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { AppError } from '../kernel/errors.js';

export interface QrOptions {
  errorCorrectionLevel: 'L' | 'M' | 'Q' | 'H';
  margin: number;
  width: number;
}

/** Renders waiting at once; beyond it a caller gets service_unavailable instead of a growing queue. */
const MAX_PENDING = 64;

const qrcodePath = createRequire(import.meta.url).resolve('qrcode');

/** The worker's whole program: plain CommonJS, so it runs the same under tsx, compiled output and tests. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const QRCode = require(${JSON.stringify(qrcodePath)});
parentPort.on('message', ({ id, text, options }) => {
  QRCode.toDataURL(text, options).then(
    (url) => parentPort.postMessage({ id, url }),
    (err) => parentPort.postMessage({ id, error: String((err && err.message) || err) }),
  );
});
`;

type Pending = { resolve(url: string): void; reject(e: Error): void };

/** A bound on renders in flight for one caller class (an address, a tenant): `limit` at once per `key`. */
export interface RenderBound {
  key: string;
  limit: number;
}

/**
 * Renders QR codes as PNG data URLs on a worker thread. Encoding a PNG is 30-500 ms of CPU on a busy
 * machine; on the main thread it stalls every request of the node (GraphQL aliases of the
 * private-server QR code kept /healthz unanswered for seconds). One worker, started on first use and
 * unref'd, is enough: renders are rare and cached by their callers. The node owns its renderer (infra,
 * src/composition/infra.ts) and stops the thread with its other resources (closeInfra): an unreferenced thread
 * does not keep the process alive, but it runs until stopped, so a node stopped in a process that goes
 * on (tests run many) left one thread per node behind.
 */
export class QrRenderer {
  private worker?: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private readonly inFlight = new Map<string, number>();
  private done = 0;

  /**
   * Renders `text`. Each bound caps the renders in flight under its key (e.g. one per client address and
   * one per tenant, for unauthenticated callers): past it the caller gets `rate_limited` at once, so no
   * caller class can queue unbounded work or take the whole worker from the others.
   */
  render(text: string, options: QrOptions, bounds: readonly RenderBound[] = []): Promise<string> {
    if (this.pending.size >= MAX_PENDING)
      return Promise.reject(new AppError('service_unavailable', 'Too many QR codes being rendered', { retryAfter: 1 }));
    const full = bounds.find((b) => (this.inFlight.get(b.key) ?? 0) >= b.limit);
    if (full)
      return Promise.reject(
        new AppError('rate_limited', 'Too many QR codes being rendered for this caller', { retryAfter: 1 }),
      );
    for (const b of bounds) this.inFlight.set(b.key, (this.inFlight.get(b.key) ?? 0) + 1);
    const release = () => {
      for (const b of bounds) {
        const n = (this.inFlight.get(b.key) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(b.key);
        else this.inFlight.set(b.key, n);
      }
    };
    const worker = this.worker ?? this.start();
    const id = ++this.nextId;
    return new Promise<string>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, text, options });
    }).finally(release);
  }

  /** Renders completed on the worker thread since start (operations and tests read it). */
  get rendered(): number {
    return this.done;
  }

  /** Renders in flight under one bound's key. */
  inFlightFor(key: string): number {
    return this.inFlight.get(key) ?? 0;
  }

  /** Stops the worker (shutdown); renders in flight fail. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }

  private start(): Worker {
    const w = new Worker(WORKER_SOURCE, { eval: true });
    w.on('message', (m: { id: number; url?: string; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      this.done++;
      if (m.url !== undefined) p.resolve(m.url);
      else p.reject(new AppError('internal', 'QR code rendering failed', { cause: new Error(m.error) }));
    });
    const fail = (e: Error) => {
      if (this.worker === w) this.worker = undefined;
      for (const p of this.pending.values())
        p.reject(new AppError('service_unavailable', 'QR code renderer stopped', { cause: e, retryAfter: 1 }));
      this.pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`QR worker exited with ${code}`)));
    // After the listeners: adding a 'message' listener refs the worker's port again.
    w.unref();
    this.worker = w;
    return w;
  }
}
