import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { AppError } from '../../kernel/errors.js';

/** What the operator lets webhook deliveries reach (WEBHOOK_* settings). */
export interface OutboundPolicy {
  /** Loopback, private, link-local and other special-purpose ranges become reachable (development, tests). */
  allowPrivateNetworks: boolean;
  /** Plain http:// endpoints are accepted (otherwise https:// only). */
  allowHttp: boolean;
  /**
   * Development receivers (decision 1071): http:// to a loopback host (localhost, *.localhost, 127.0.0.0/8,
   * ::1) and loopback addresses become reachable; every other special-purpose range stays refused.
   */
  allowLocalReceivers?: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
}

/**
 * Addresses a delivery never goes to unless the operator allows private networks: the IANA
 * special-purpose ranges (RFC 6890 and successors): this network, private, shared (CGN), loopback,
 * link-local (cloud metadata at 169.254.169.254), documentation, benchmarking, multicast, reserved,
 * and their IPv6 counterparts (NAT64 included); an IPv4-mapped IPv6 address is checked against the IPv4 ranges.
 */
const SPECIAL = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  SPECIAL.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  SPECIAL.addSubnet(net, bits, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function isLoopback(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A host a development receiver may be named by: localhost, a name under .localhost, a loopback address. */
export function isLocalReceiverHost(hostname: string): boolean {
  const h = bareHost(hostname).toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || isLoopback(h);
}

/** Whether a delivery may connect to this resolved address under the policy. */
export function addressAllowed(
  address: string,
  policy: Pick<OutboundPolicy, 'allowPrivateNetworks' | 'allowLocalReceivers'>,
): boolean {
  const family = isIP(address);
  if (!family) return false;
  if (policy.allowPrivateNetworks) return true;
  if (policy.allowLocalReceivers && isLoopback(address)) return true;
  return !SPECIAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Checks a subscription URL's form (scheme, no credentials, a host); throws url_not_allowed. */
export function checkUrl(raw: string, policy: Pick<OutboundPolicy, 'allowHttp' | 'allowLocalReceivers'>): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused('url', 'not an absolute URL');
  }
  const localHttp = policy.allowLocalReceivers && url.protocol === 'http:' && isLocalReceiverHost(url.hostname);
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:') && !localHttp)
    throw refused('url', policy.allowHttp ? 'only http and https URLs' : 'only https URLs');
  if (url.username || url.password) throw refused('url', 'credentials in the URL are not allowed');
  if (!url.hostname) throw refused('url', 'no host');
  return url;
}

function refused(field: string, message: string): AppError {
  return new AppError('url_not_allowed', `${field}: ${message}`, { errors: [{ field, message }] });
}

const bareHost = (h: string) => (h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h);

/**
 * Resolves a host and checks every address it resolves to: one refused address refuses the host
 * (a name answering both a public and a private address is an attack, not a configuration).
 */
export function resolveChecked(host: string, policy: OutboundPolicy): Promise<LookupAddress[]> {
  const h = bareHost(host);
  if (policy.allowLocalReceivers && !isIP(h) && isLocalReceiverHost(h))
    return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
  if (isIP(h)) {
    if (!addressAllowed(h, policy)) return Promise.reject(refused('url', `address ${h} is not allowed`));
    return Promise.resolve([{ address: h, family: isIP(h) }]);
  }
  return new Promise((resolve, reject) =>
    dnsLookup(h, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return reject(new AppError('url_not_allowed', `url: host ${h} does not resolve`, { cause: err }));
      const bad = addresses.find((a) => !addressAllowed(a.address, policy));
      if (bad || !addresses.length)
        return reject(refused('url', `host ${h} resolves to ${bad?.address ?? 'nothing'}, which is not allowed`));
      resolve(addresses);
    }),
  );
}

/**
 * The socket connects to exactly the addresses this lookup checked: the name is resolved once, here,
 * so a second answer (DNS rebinding) cannot slip a private address in between the check and the connect.
 */
function checkedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveChecked(hostname, policy).then(
      (addresses) => {
        const wanted = options.family ? addresses.filter((a) => a.family === options.family) : addresses;
        const list = wanted.length ? wanted : addresses;
        if (options.all) (callback as (e: null, a: LookupAddress[]) => void)(null, list);
        else callback(null, list[0]!.address, list[0]!.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}

export interface OutboundResult {
  ok: boolean;
  status?: number;
  latencyMs: number;
  error?: string;
}

/**
 * POSTs a delivery: no redirects followed, one deadline for the whole exchange, the response read up
 * to `maxResponseBytes` and then cut off. Never throws: the outcome is the attempt's record.
 */
export function postJson(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  policy: OutboundPolicy,
): Promise<OutboundResult> {
  const started = performance.now();
  const done = (r: Omit<OutboundResult, 'latencyMs'>): OutboundResult => ({
    ...r,
    latencyMs: Math.round(performance.now() - started),
  });
  let url: URL;
  try {
    url = checkUrl(rawUrl, policy);
  } catch (e) {
    return Promise.resolve(done({ ok: false, error: (e as Error).message }));
  }
  const h = bareHost(url.hostname);
  if (isIP(h) && !addressAllowed(h, policy))
    return Promise.resolve(done({ ok: false, error: `url: address ${h} is not allowed` }));
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: Omit<OutboundResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(r));
    };
    const lib = url.protocol === 'https:' ? https : http;
    const req = lib.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: checkedLookup(policy),
        agent: false,
      },
      (res) => {
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > policy.maxResponseBytes) {
            res.destroy();
            finish(outcome(res.statusCode, `response larger than ${policy.maxResponseBytes} bytes`));
          }
        });
        res.on('end', () => finish(outcome(res.statusCode)));
        res.on('error', (err) => finish({ ok: false, status: res.statusCode, error: err.message }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ ok: false, error: `timed out after ${policy.timeoutMs} ms` });
    }, policy.timeoutMs);
    req.on('error', (err) => finish({ ok: false, error: err.message }));
    req.end(body);
  });
}

/**
 * 2xx is delivered (a body past the cap is cut off and noted, the status already answered); anything
 * else, redirects included, is a failed attempt.
 */
function outcome(status: number | undefined, note?: string): Omit<OutboundResult, 'latencyMs'> {
  const ok = status !== undefined && status >= 200 && status < 300;
  const error = ok ? note : [`HTTP ${status}`, note].filter(Boolean).join('; ');
  return { ok, status, ...(error ? { error } : {}) };
}
