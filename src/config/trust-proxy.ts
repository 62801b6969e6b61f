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
