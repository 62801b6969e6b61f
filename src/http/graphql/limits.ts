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
function walk(
  set: SelectionSetNode | undefined,
  frags: Fragments,
  depth: number,
  seen: Set<string>,
  memo: Map<string, Measure> = new Map(),
): Measure {
  if (!set) return { depth, cost: 0 };
  let maxDepth = depth;
  let cost = 0;
  for (const sel of set.selections) {
    let sub: { depth: number; cost: number };
    if (sel.kind === Kind.FIELD) {
      // Introspection roots count once (their walk is bounded by the schema); __typename counts like any field.
      if (sel.name.value === '__schema' || sel.name.value === '__type') {
        sub = { depth: depth + 1, cost: 1 };
        maxDepth = Math.max(maxDepth, sub.depth);
        cost += sub.cost;
        continue;
      }
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

/** How often one selection set may select the same field (under different aliases). */
export const MAX_SAME_FIELD = 10;

/**
 * Refuses operations that are too deep or too costly before any resolver runs, and selection sets
 * that select one field more than MAX_SAME_FIELD times. This walk is the structural bound (and
 * memoises fragments, so it stays linear); the per-field cost in real work is weighed after it by
 * ./cost.ts. Introspection roots (`__schema`, `__type`) count once, so tools keep working.
 */
export const queryLimits: ValidationRule = (ctx) => {
  const frags: Fragments = {};
  for (const d of ctx.getDocument().definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) frags[d.name.value] = d;
  return {
    SelectionSet(node) {
      const counts = new Map<string, number>();
      for (const sel of node.selections) {
        if (sel.kind !== Kind.FIELD) continue;
        const n = (counts.get(sel.name.value) ?? 0) + 1;
        counts.set(sel.name.value, n);
        if (n === MAX_SAME_FIELD + 1)
          ctx.reportError(
            new GraphQLError(
              `Field '${sel.name.value}' is selected more than ${MAX_SAME_FIELD} times in one selection set`,
              { nodes: [sel], extensions: { code: 'query_too_complex' } },
            ),
          );
      }
    },
    OperationDefinition(node) {
      const { depth, cost } = walk(node.selectionSet, frags, 0, new Set());
      if (depth > MAX_DEPTH)
        ctx.reportError(
          new GraphQLError(`Query depth ${depth} exceeds the limit of ${MAX_DEPTH}`, {
            extensions: { code: 'query_too_complex' },
          }),
        );
      else if (cost > MAX_COST)
        ctx.reportError(
          new GraphQLError(`Query cost ${cost} exceeds the limit of ${MAX_COST}`, {
            extensions: { code: 'query_too_complex' },
          }),
        );
    },
  };
};
