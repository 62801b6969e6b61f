import type { ActorAddress, ActorBehavior, ActorContext } from '../../src/actors/runtime/types.js';

export interface Emitted {
  rooms: string[];
  event: string;
  payload: any;
}

/**
 * Runs an actor behaviour's turns in memory, one at a time, recording pushes and timers: enough to
 * test the pure turn logic; the runtime's own tests cover placement, snapshots and fencing.
 */
export function turnHarness<S, M>(behavior: ActorBehavior<S, M, unknown>, address: ActorAddress) {
  let state = behavior.initialState(address);
  const emitted: Emitted[] = [];
  const timers = new Map<string, { delayMs: number; msg: unknown }>();
  let queue = Promise.resolve<unknown>(undefined);
  /** Whether the last turn that succeeded retired the actor (ctx.retire), and with which retention. */
  let retired: { retainMs?: number } | undefined;
  const send = (msg: M): Promise<any> => {
    const run = queue.then(async () => {
      const pending: Emitted[] = [];
      let retiring: { retainMs?: number } | undefined;
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
      const reply = await behavior.receive(ctx, msg);
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
