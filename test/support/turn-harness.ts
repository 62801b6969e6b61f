import type { ActorAddress, ActorBehavior, ActorContext } from '../../src/actors/runtime/types.js';

export interface Emitted {
  rooms: string[];
  event: string;
  payload: any;
}

/** A deep-frozen copy of plain JSON data, as the runtime keeps an actor's state between turns. */
function frozenCopy<T>(value: T): T {
  const freeze = (v: unknown): unknown => {
    if (typeof v === 'object' && v !== null) for (const item of Object.values(Object.freeze(v))) freeze(item);
    return v;
  };
  return freeze(JSON.parse(JSON.stringify(value ?? null))) as T;
}

/**
 * Runs an actor behaviour's turns in memory, one at a time, recording pushes and timers: enough to
 * test the pure turn logic; the runtime's own tests cover placement, snapshots and fencing. A message
 * the behaviour declares read-only sees the state deep-frozen, as in the runtime (decision 1120), so a
 * declared read that writes fails here too.
 */
export function turnHarness<S, M>(behavior: ActorBehavior<S, M, unknown>, address: ActorAddress, from?: S) {
  /**
   * `from`: the state to start with (an older snapshot's, say) instead of the behaviour's initial one.
   * Without it the actor has no snapshot: as in the runtime, what the behaviour recovers (decision 1104)
   * is the state its first turn sees.
   */
  let state = from ?? behavior.initialState(address);
  const emitted: Emitted[] = [];
  const timers = new Map<string, { delayMs: number; msg: unknown }>();
  let queue: Promise<unknown> =
    from === undefined && behavior.recover
      ? behavior.recover(address, state).then((recovered) => void (state = recovered))
      : Promise.resolve<unknown>(undefined);
  /** Whether the last turn that succeeded retired the actor (ctx.retire), and with which retention. */
  let retired: { retainMs?: number } | undefined;
  const send = (msg: M): Promise<any> => {
    const run = queue.then(async () => {
      const pending: Emitted[] = [];
      let retiring: { retainMs?: number } | undefined;
      const kept = state;
      const frozen = behavior.readOnly?.(msg) ? frozenCopy(state) : undefined;
      if (frozen !== undefined) state = frozen;
      const ctx: ActorContext<S> = {
        address,
        get state() {
          return state;
        },
        set state(v: S) {
          state = v;
        },
        epoch: 1,
        setTimer: (name, delayMs, m) => void timers.set(name, { delayMs, msg: m }),
        clearTimer: (name) => void timers.delete(name),
        emit: (r, event, payload) =>
          void pending.push({ rooms: ([] as string[]).concat(r), event, payload: structuredClone(payload) }),
        moveSockets: (r, change) =>
          void pending.push({ rooms: ([] as string[]).concat(r), event: 'move', payload: structuredClone(change) }),
        ask: async () => {
          throw new Error('ask is not used by these behaviours');
        },
        passivate: () => undefined,
        retire: (retainMs) => void (retiring = retainMs === undefined ? {} : { retainMs }),
        fencedWrite: async (write) => {
          const r = await write(1);
          if (r === false) throw new Error('fenced');
          return r;
        },
      };
      let reply: unknown;
      try {
        reply = await behavior.receive(ctx, msg);
      } finally {
        // The frozen copy goes again unless the turn replaced the state (which the runtime persists).
        if (frozen !== undefined && state === frozen) state = kept;
      }
      emitted.push(...pending);
      retired = retiring;
      return reply;
    });
    queue = run.catch(() => undefined);
    return run;
  };
  const fire = (name: string): Promise<any> => {
    const t = timers.get(name);
    if (!t) throw new Error(`no timer ${name}`);
    timers.delete(name);
    return send(t.msg as M);
  };
  return {
    send,
    fire,
    timers,
    emitted,
    get retired() {
      return retired;
    },
    get state() {
      return state;
    },
  };
}
