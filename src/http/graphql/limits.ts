import { GraphQLError, Kind, type FragmentDefinitionNode, type SelectionSetNode, type ValidationRule } from 'graphql';

/** Deepest selection accepted (Query.groupById.participants.x is depth 3). */
export const MAX_DEPTH = 8;
/** Highest estimated cost accepted; each field costs 1, times the size of the lists above it. */
export const MAX_COST = 5000;
/** Estimated list sizes for cost: contact pages are at most PAGE_MAX_TAKE, groups are bounded at creation. */
const LIST_SIZES: Record<string, number> = { items: 100, participants: 500, contactAlphabets: 27, permissions: 1 };

type Fragments = Record<string, FragmentDefinitionNode>;

type Measure = { depth: number; cost: number };

/**
 * Depth and cost of a selection set. Each fragment is measured once (relative to where it is spread)
 * and memoised, so fragments spreading fragments twice per level cannot make this walk exponential.
 */
function walk(set: SelectionSetNode | undefined, frags: Fragments, depth: number, seen: Set<string>, memo: Map<string, Measure> = new Map()): Measure {
  if (!set) return { depth, cost: 0 };
  let maxDepth = depth;
  let cost = 0;
  for (const sel of set.selections) {
    let sub: { depth: number; cost: number };
    if (sel.kind === Kind.FIELD) {
      if (sel.name.value.startsWith('__')) continue;
      const inner = walk(sel.selectionSet, frags, depth + 1, seen, memo);
      sub = { depth: inner.depth, cost: 1 + inner.cost * (LIST_SIZES[sel.name.value] ?? 1) };
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      sub = walk(sel.selectionSet, frags, depth, seen, memo);
    } else {
      const name = sel.name.value;
      if (seen.has(name) || !frags[name]) continue;
      const rel = memo.get(name) ?? walk(frags[name]!.selectionSet, frags, 0, new Set([...seen, name]), memo);
      memo.set(name, rel);
      sub = { depth: depth + rel.depth, cost: rel.cost };
    }
    maxDepth = Math.max(maxDepth, sub.depth);
    cost += sub.cost;
  }
  return { depth: maxDepth, cost };
}

/**
 * Refuses operations that are too deep or too costly before any resolver runs. Introspection fields
 * (`__schema`, `__type`) are not counted, so tools keep working.
 */
export const queryLimits: ValidationRule = (ctx) => {
  const frags: Fragments = {};
  for (const d of ctx.getDocument().definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) frags[d.name.value] = d;
  return {
    OperationDefinition(node) {
      const { depth, cost } = walk(node.selectionSet, frags, 0, new Set());
      if (depth > MAX_DEPTH) ctx.reportError(new GraphQLError(`Query depth ${depth} exceeds the limit of ${MAX_DEPTH}`, { extensions: { code: 'query_too_complex' } }));
      else if (cost > MAX_COST) ctx.reportError(new GraphQLError(`Query cost ${cost} exceeds the limit of ${MAX_COST}`, { extensions: { code: 'query_too_complex' } }));
    },
  };
};
