/**
 * Why a PIN is too easy to guess whatever the tenant's policy (NIST SP 800-63B 5.1.1.2: memorized
 * secrets that are repetitive or sequential are refused), or undefined when it is not:
 * - one character repeated (`0000`, `111111`);
 * - a run with a constant step between neighbours (`1234`, `4321`, `2468`, `9630`), digits also wrapping
 *   past 9 to 0 (`7890`, `8901`, `0987`);
 * - a shorter block repeated (`1212`, `123123`, `100100`).
 * Characters are compared by code point, so letters in a tenant that allows them follow the same rules.
 */
export function pinWeakness(pin: string): string | undefined {
  const c = [...pin].map((ch) => ch.codePointAt(0)!);
  if (c.length < 3) return undefined;
  if (c.every((x) => x === c[0])) return 'must not repeat one character';
  const step = c[1]! - c[0]!;
  if (c.every((x, i) => i === 0 || x - c[i - 1]! === step)) return 'must not be a sequence';
  if (/^\d+$/.test(pin)) {
    const d = c.map((x) => x - 48);
    for (const wrap of [1, -1])
      if (d.every((x, i) => i === 0 || x === (((d[i - 1]! + wrap) % 10) + 10) % 10)) return 'must not be a sequence';
  }
  for (let size = 1; size <= c.length / 2; size++)
    if (c.length % size === 0 && pin === pin.slice(0, size).repeat(c.length / size)) return 'must not repeat a block';
  return undefined;
}
