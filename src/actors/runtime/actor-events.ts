import type { EventEmitter } from 'node:events';
import type { ActorAddress } from './types.js';

/** Why a shard is handed to another node: the node stops, or the shard's rendezvous owner changed. */
export type HandoffReason = 'stop' | 'rebalance';

/** Why a node stops serving a shard at once. */
export type DropReason = 'self-fenced' | 'lost' | 'fenced' | 'disconnected';

/**
 * The actor system's events, for tests and operators, each with its arguments: the compiler checks every
 * `emit` of the runtime and every listener against this map.
 */
export interface ActorEventMap {
  /** An actor became active on this node (fresh or from its snapshot), under the shard's epoch. */
  activated: [address: ActorAddress, epoch: number];
  passivated: [address: ActorAddress, reason: 'idle' | 'requested' | 'error'];
  'shard-acquired': [shard: number, epoch: number];
  'shard-lost': [shard: number, reason: DropReason];
  'handoff-started': [shard: number, reason: HandoffReason];
  /** The shard's lease was released and its buffered messages go to the next owner. */
  handoff: [shard: number, reason: HandoffReason];
  /** A write of an actor was refused by its fence (a stale epoch or lease). */
  fenced: [address: ActorAddress];
  /** The hosting nodes as this node read them, when they changed. */
  membership: [nodes: readonly string[]];
  /** A member's Redis connection was missing from a poll (`misses` in a row). */
  unseen: [node: string, misses: number];
  /** A crashed member was evicted, with the shards freed and the time their leases still had. */
  evicted: [node: string, freed: { shard: number; ttlMs: number }[]];
  /** This node's inbox connection closed or is ready again. */
  inbox: [state: 'closed' | 'ready'];
}

export type ActorSystemEvents = EventEmitter<ActorEventMap>;
