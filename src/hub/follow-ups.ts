/**
 * Work the hub starts for a socket without making anyone wait for it: presence on connect and
 * disconnect, and what a disconnect leaves to do (the meeting leave of the audit trail, leaving a
 * waiting room). The hub's stop waits for it before Redis and MongoDB close, and `settled()` answers
 * once none is left, so a reader can tell "a closed socket's effects are done" from "still coming".
 */
export class FollowUps {
  private readonly pending = new Set<Promise<unknown>>();

  /** Tracks `work` until it settles; answers it unchanged (its rejection is the caller's to handle). */
  track<T>(work: Promise<T>): Promise<T> {
    const done = () => void this.pending.delete(work);
    // Attached first, so the entry is gone before any waiter of settled() resumes.
    work.then(done, done);
    this.pending.add(work);
    return work;
  }

  /** How much tracked work is in flight (the hub's `hub_follow_ups_in_flight` gauge). */
  get size(): number {
    return this.pending.size;
  }

  /** Resolves once no tracked work is left, including work started while waiting. */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }
}
