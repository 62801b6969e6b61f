/** Raised inside the fast path at anything that is not plain JSON data; never escapes jsonCopy. */
const NOT_PLAIN = Symbol('not plain JSON data');
/** Deeper than this (or a cycle) goes the JSON way, which copies it or throws as it always did. */
const MAX_DEPTH = 200;

/**
 * `JSON.parse(JSON.stringify(value))` for a defined value, without the string in between: a turn's reply
 * is copied so no caller holds the actor's state, and has the shape a reply from another node has.
 * Plain objects, arrays, strings, finite numbers, booleans and null are copied directly; anything else
 * (a toJSON, a class instance, a Map, a non-finite number at the top, a cycle, a `__proto__` key) makes
 * the whole value go through JSON itself, so the result (or the error) is always JSON's
 * (json-copy.test.ts holds the two equal over generated values).
 */
export function jsonCopy<T>(value: T): T {
  try {
    return copy(value, 0) as T;
  } catch (e) {
    if (e !== NOT_PLAIN) throw e;
    return JSON.parse(JSON.stringify(value)) as T;
  }
}

/** What JSON leaves out of an object, or writes as null in an array. */
function omitted(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

function copy(v: unknown, depth: number): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      // -0 is written as 0; NaN and the infinities as null.
      return Number.isFinite(v) ? v + 0 : null;
    case 'object':
      break;
    default:
      throw NOT_PLAIN;
  }
  if (v === null) return null;
  if (depth > MAX_DEPTH || typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) throw NOT_PLAIN;
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      out.push(omitted(item) ? null : copy(item, depth + 1));
    }
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) {
    const item = (v as Record<string, unknown>)[key];
    if (omitted(item)) continue;
    if (key === '__proto__') throw NOT_PLAIN;
    out[key] = copy(item, depth + 1);
  }
  return out;
}

/** Freezes a parsed JSON value and everything in it (plain objects, arrays and primitives only). */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  Object.freeze(value);
  if (Array.isArray(value)) for (const item of value) deepFreeze(item);
  else for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}
