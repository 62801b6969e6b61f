import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/** Decides whether the hop at `addr` (the `i`th from the socket) is a proxy whose forwarded headers count. */
export type TrustProxy = (addr: string, i: number) => boolean;

/**
 * Compiles `TRUST_PROXY` once for every transport (Express, the hub handshake, the embedded realm):
 * `false` or empty trusts no proxy (the default: `X-Forwarded-*` from clients is ignored), `true`
 * trusts every hop, a number trusts that many hops, anything else is a comma-separated list of
 * addresses, CIDR ranges or the names `loopback`, `linklocal`, `uniquelocal`.
 */
export function compileTrustProxy(setting: string): TrustProxy {
  const s = setting.trim();
  if (s === '' || s === 'false') return () => false;
  if (s === 'true') return () => true;
  if (/^\d+$/.test(s)) {
    const hops = Number(s);
    return (_addr, i) => i < hops;
  }
  return proxyaddr.compile(
    s
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean),
  );
}

/** The client's address: the socket peer, or the forwarded address behind trusted proxies only. */
export function clientAddress(req: IncomingMessage, trust: TrustProxy): string {
  return proxyaddr(req, trust);
}

export { addressKey } from '../core/address-key.js';

/**
 * Whether the request comes from a configured proxy address itself, with nobody untrusted behind it: every
 * hop from the socket to the client is trusted under `TRUST_PROXY`. What such a caller sends about the
 * request (a W3C `traceparent`) is believed; a request relayed for an outside client is not, since a proxy
 * passes the client's headers on.
 */
export function callerIsTrusted(req: IncomingMessage, trust: TrustProxy): boolean {
  const chain = proxyaddr.all(req, trust);
  const i = chain.length - 1;
  return i >= 0 && trust(chain[i]!, i);
}
