/** The tenant label of a Host header: `{tenant}.{baseDomain}[:port]` -> tenant; anything else -> undefined. */
export function tenantFromHost(host: string | undefined, baseDomain: string): string | undefined {
  if (!host) return undefined;
  const hostname = host.replace(/:\d+$/, '').toLowerCase().replace(/\.$/, '');
  const suffix = `.${baseDomain.toLowerCase()}`;
  if (!hostname.endsWith(suffix)) return undefined;
  const label = hostname.slice(0, -suffix.length);
  return label && !label.includes('.') ? label : undefined;
}
