/**
 * Counts are chosen per benchmark for a full run (about 15 minutes on a 2-core machine) and a quick
 * run (`--quick`: tiny counts for development on a shared machine). BENCH_SCALE carries the choice.
 */
export type Scale = 'full' | 'quick';

export function currentScale(): Scale {
  return process.env.BENCH_SCALE === 'quick' ? 'quick' : 'full';
}

export function scaled<T>(full: T, quick: T): T {
  return currentScale() === 'quick' ? quick : full;
}
