import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP receiver sees it, with the resource attributes of the process that sent it. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  /** `service.instance.id` of the sender: the node id. */
  node: string;
  service: string;
  status?: { code?: number; message?: string };
}

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: (Omit<CollectedSpan, 'attributes' | 'node' | 'service'> & { attributes?: KeyValue[] })[];
    }[];
  }[];
}

const value = (v: AnyValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attrs = (kvs: KeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, value(kv.value)]));

/**
 * A tiny OTLP/HTTP trace receiver for tests: accepts `POST /v1/traces` with the JSON encoding the
 * service's exporter sends, keeps every span, and lets a test await the spans it expects.
 */
export async function startOtlpCollector() {
  const spans: CollectedSpan[] = [];
  const waiters = new Set<() => void>();
  const server: Server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (!String(req.headers['content-type']).startsWith('application/json')) return void res.writeHead(415).end();
      const parsed = JSON.parse(body) as ExportRequest;
      for (const rs of parsed.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              ...s,
              parentSpanId: s.parentSpanId || undefined,
              attributes: attrs(s.attributes),
              node: String(resource['service.instance.id']),
              service: String(resource['service.name']),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    /** Resolves with the spans once `done(spans)` holds (checked on every export received). */
    until(done: (all: CollectedSpan[]) => boolean, timeoutMs = 60_000): Promise<CollectedSpan[]> {
      if (done(spans)) return Promise.resolve(spans);
      return new Promise((resolve, reject) => {
        const w = () => {
          if (!done(spans)) return;
          clearTimeout(t);
          waiters.delete(w);
          resolve(spans);
        };
        const t = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`expected spans not exported; got: ${spans.map((s) => `${s.node}:${s.name}`).join(', ')}`));
        }, timeoutMs);
        waiters.add(w);
      });
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
