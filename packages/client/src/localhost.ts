/**
 * Names under `.localhost` are loopback (RFC 6761, section 6.3): browsers resolve them to 127.0.0.1
 * themselves, but Node.js asks the system resolver, and glibc does not know them (`ENOTFOUND
 * demo.localhost`). In Node.js the client connects such names to loopback itself, keeping the name in the
 * URL and so in the `Host` header the service reads the tenant from (Node's fetch would drop a `Host`
 * header set by hand). Anywhere else (browsers, other names) nothing changes.
 */

/** True for `localhost` and any name under `.localhost`. */
export function isLoopbackName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/* Minimal shapes of the Node.js modules used here (the package is typed for browsers too). */
type LookupCallback = (
  err: Error | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;
interface NodeAgent {
  destroy(): void;
}
interface NodeModules {
  http: { Agent: new (opts: Record<string, unknown>) => NodeAgent; request: (...a: unknown[]) => NodeRequest };
  https: { Agent: new (opts: Record<string, unknown>) => NodeAgent; request: (...a: unknown[]) => NodeRequest };
  dns: { lookup: (host: string, opts: unknown, cb: LookupCallback) => void };
}
interface NodeRequest {
  on(event: 'error', l: (e: Error) => void): void;
  write(b: Uint8Array): void;
  end(): void;
}
interface NodeResponse {
  statusCode?: number;
  headers: Record<string, string | string[] | undefined>;
  on(event: 'data', l: (c: Uint8Array) => void): void;
  on(event: 'end' | 'error', l: (e?: Error) => void): void;
}

interface Loopback {
  modules: NodeModules;
  agents: { 'http:': NodeAgent; 'https:': NodeAgent };
}

/** True in Node.js (not in a browser, where the page's own resolution applies). */
export function inNode(): boolean {
  const g = globalThis as { process?: { versions?: { node?: string } }; document?: unknown };
  return typeof g.process?.versions?.node === 'string' && g.document === undefined;
}

let loaded: Promise<Loopback> | undefined;

/** Agents whose connections resolve `*.localhost` to 127.0.0.1 and every other name as usual (Node.js only). */
export function loopbackAgents(): Promise<Loopback> {
  loaded ??= (async () => {
    const [http, https, dns] = await Promise.all([
      import('node:http' as string),
      import('node:https' as string),
      import('node:dns' as string),
    ]);
    const modules = { http, https, dns } as unknown as NodeModules;
    const lookup = (hostname: string, options: { all?: boolean } | number, callback: LookupCallback) => {
      if (!isLoopbackName(hostname)) return modules.dns.lookup(hostname, options, callback);
      if (typeof options === 'object' && options?.all) return callback(null, [{ address: '127.0.0.1', family: 4 }]);
      return callback(null, '127.0.0.1', 4);
    };
    return {
      modules,
      agents: {
        'http:': new modules.http.Agent({ keepAlive: true, lookup }),
        'https:': new modules.https.Agent({ keepAlive: true, lookup }),
      },
    };
  })();
  return loaded;
}

/** A fetch over Node's http/https with the loopback agents: the request goes out with its own Host. */
export async function loopbackFetch(input: Request | string | URL, init?: RequestInit): Promise<Response> {
  const { modules, agents } = await loopbackAgents();
  const req = new Request(input, init);
  const url = new URL(req.url);
  const body = req.body ? new Uint8Array(await req.arrayBuffer()) : undefined;
  const headers: Record<string, string> = {};
  req.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (body) headers['content-length'] = String(body.length);
  const secure = url.protocol === 'https:';
  return new Promise<Response>((resolve, reject) => {
    const r = (secure ? modules.https : modules.http).request(
      url,
      { method: req.method, headers, agent: agents[secure ? 'https:' : 'http:'], signal: req.signal },
      (res: NodeResponse) => {
        const chunks: Uint8Array[] = [];
        res.on('data', (c) => void chunks.push(c));
        res.on('error', (e) => reject(e));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
          const status = res.statusCode ?? 0;
          const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
          let at = 0;
          for (const c of chunks) {
            all.set(c, at);
            at += c.length;
          }
          resolve(new Response(status === 204 || status === 304 ? null : all, { status, headers: h }));
        });
      },
    );
    r.on('error', reject);
    if (body) r.write(body);
    r.end();
  });
}
