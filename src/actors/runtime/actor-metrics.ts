import { HistogramChild, type Metrics } from '../../observability/metrics.js';

/**
 * The runtime's figures, on the node's registry (so several nodes in one process stay apart). `live`
 * reads how many actors are active on the node now and `depth` how many messages wait in their
 * mailboxes (each at a scrape, not at every enqueue).
 */
export function actorMetrics(m: Metrics, live: () => number = () => 0, depth: () => number = () => 0) {
  const turnDuration = m.histogram(
    'actor_turn_duration_seconds',
    'Duration of one actor turn including its write-through',
    ['kind'],
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  const turnChildren = new Map<string, HistogramChild>();
  return {
    live: m.gauge('actor_activations_live', 'Actors active on this node now', [], live),
    activations: m.counter('actor_activations_total', 'Actors activated (fresh or from a snapshot)', ['kind']),
    passivations: m.counter('actor_passivations_total', 'Actors deactivated', ['kind', 'reason']),
    routed: m.counter('actor_messages_routed_total', 'Messages routed to an actor, by where its owner was', ['route']),
    remoteRequests: m.counter(
      'actor_remote_requests_total',
      'Requests sent to another node, by the way they went: its direct link or its Redis inbox (decision 1186)',
      ['path'],
    ),
    handoffs: m.counter('actor_handoffs_total', 'Shards handed to another node', ['reason']),
    forwarded: m.counter(
      'actor_handoff_forwarded_total',
      'Buffered messages forwarded to the next owner after a handoff',
    ),
    fencedWrites: m.counter('actor_fenced_writes_total', 'Writes rejected because the writer epoch was stale', [
      'kind',
    ]),
    evictions: m.counter(
      'actor_node_evictions_total',
      'Nodes this node evicted because their Redis connection was gone (crashed)',
    ),
    dedupeHits: m.counter(
      'actor_dedupe_hits_total',
      'Retried messages answered from the remembered reply or joined to their first delivery',
      ['kind'],
    ),
    expired: m.counter(
      'actor_asks_expired_total',
      "Asks dropped unrun because their asker's deadline passed before their turn began",
      ['kind'],
    ),
    namesResent: m.counter(
      'actor_caller_names_resent_total',
      "Requests sent again with their caller's permissions named: the node that got the mask reads another catalogue or none (decision 1156)",
    ),
    mailboxDepth: m.gauge('actor_mailbox_depth', 'Messages waiting in mailboxes on this node', [], depth),
    shardsOwned: m.gauge('actor_shards_owned', 'Shards whose lease this node holds'),
    turnDuration,
    /** The turn histogram's child of an actor kind, kept (label lookups per turn showed in B1's profile). */
    turnDurationOf(kind: string) {
      let child = turnChildren.get(kind);
      if (!child) turnChildren.set(kind, (child = new HistogramChild(turnDuration, { kind })));
      return child;
    },
  };
}

export type ActorMetrics = ReturnType<typeof actorMetrics>;
