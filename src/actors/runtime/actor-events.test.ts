import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { ActorEventMap, ActorSystemEvents } from './actor-events.js';

describe('actor system events (typed by ActorEventMap)', () => {
  it('carries each event with its declared arguments; the compiler refuses others', () => {
    const events: ActorSystemEvents = new EventEmitter<ActorEventMap>();
    const seen: unknown[][] = [];
    events.on('shard-lost', (shard, reason) => seen.push([shard, reason]));
    events.on('inbox', (state) => seen.push([state]));
    events.emit('shard-lost', 3, 'fenced');
    events.emit('inbox', 'closed');
    // @ts-expect-error: not a reason a shard is dropped for
    events.emit('shard-lost', 3, 'tired');
    // @ts-expect-error: a shard is a number
    events.emit('handoff', '3', 'stop');
    // @ts-expect-error: no such event
    events.emit('shard-stolen', 3);
    // @ts-expect-error: an inbox listener gets the connection's state, not a number
    events.on('inbox', (state: number) => seen.push([state]));
    expect(seen.slice(0, 2)).toEqual([[3, 'fenced'], ['closed']]);
  });
});
