/**
 * The last position a process saw of each tenant's numbered sequence (the audit chain, the event
 * log), so the common append is one insert instead of a read of the head first. A head kept here is
 * only a guess: the sequence's unique position settles every race with writers in other processes,
 * and a writer that loses reads the head again.
 */
export class SequenceHeads<H extends { seq: number } = { seq: number }> {
  private readonly heads = new Map<string, H>();

  get(tenant: string): H | undefined {
    return this.heads.get(tenant);
  }

  /** Keeps the highest head seen (a slower writer never moves it back). */
  set(tenant: string, head: H): void {
    const known = this.heads.get(tenant);
    if (!known || known.seq < head.seq) this.heads.set(tenant, head);
  }

  /** Forgets a tenant's head (its sequence was found to be behind the guess). */
  forget(tenant: string): void {
    this.heads.delete(tenant);
  }
}
