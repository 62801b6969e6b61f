/**
 * The key a per-address limit counts: an IPv4 address as is (also when IPv4-mapped), an IPv6 address
 * by its /64 network, which one subscriber usually holds whole and could otherwise rotate through.
 */
export function addressKey(addr: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
  if (mapped) return mapped[1]!;
  if (!addr.includes(':')) return addr;
  const [head = '', tail = ''] = addr.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = addr.includes('::')
    ? [...left, ...Array(Math.max(8 - left.length - right.length, 0)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (g || '0').toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
