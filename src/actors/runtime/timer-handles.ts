import type { TimerEntry } from './snapshot-store.js';

/** setTimeout's longest delay: a timer due later is armed at it and re-armed when that fires early. */
const MAX_TIMER_DELAY = 2 ** 31 - 1;

/**
 * The in-process timeouts of one activation's timer table (the persisted one): a handle per named timer
 * at its due time. `sync` aligns the handles with the table after every turn; a handle that fires while
 * its entry is still in the table at the same due time hands the entry to `due` (which queues its turn).
 */
export class TimerHandles {
  private readonly handles = new Map<string, { due: number; handle: NodeJS.Timeout }>();
  private stopped = false;

  constructor(
    private readonly table: ReadonlyMap<string, TimerEntry>,
    private readonly due: (entry: TimerEntry) => void,
  ) {}

  /** Drops the handles of timers gone or moved, and arms one for each timer without one. */
  sync(): void {
    for (const [name, h] of this.handles) {
      const t = this.table.get(name);
      if (!t || t.due !== h.due) {
        clearTimeout(h.handle);
        this.handles.delete(name);
      }
    }
    if (this.stopped) return;
    for (const t of this.table.values()) {
      if (this.handles.has(t.name)) continue;
      const handle = setTimeout(
        () => this.fire(t.name, t.due),
        Math.min(MAX_TIMER_DELAY, Math.max(0, t.due - Date.now())),
      );
      this.handles.set(t.name, { due: t.due, handle });
    }
  }

  /** Clears every handle; none is armed again (the activation closed). */
  stop(): void {
    this.stopped = true;
    for (const h of this.handles.values()) clearTimeout(h.handle);
    this.handles.clear();
  }

  private fire(name: string, due: number): void {
    this.handles.delete(name);
    const t = this.table.get(name);
    if (!t || t.due !== due || this.stopped) return;
    if (t.due > Date.now() + 5) return this.sync();
    this.due(t);
  }
}
