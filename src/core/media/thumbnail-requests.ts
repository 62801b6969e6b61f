import { THUMBNAIL_BATCH_MAX, type ThumbnailJobData } from '../../contracts/job-definitions.js';

/** Queues one thumbnail job (services.jobs.enqueue('thumbnail', ...)) and tells its id. */
export type EnqueueThumbnails = (data: ThumbnailJobData) => Promise<{ id: string }>;

interface Waiter {
  hash: string;
  resolve(v: { id: string }): void;
  reject(e: unknown): void;
}

interface TenantLane {
  /** Requests not yet in a job, in arrival order. */
  pending: Waiter[];
  /** Whether this node's previous enqueue of the tenant's thumbnails is still on its way to the queue. */
  busy: boolean;
}

/**
 * The producer of thumbnail jobs (decision 1187). A request goes to the queue at once, in a job of its
 * own, when none of its tenant's is on its way from this node; requests made while one is travel
 * together when it has arrived, up to THUMBNAIL_BATCH_MAX contents a job. A lone upload waits for nothing
 * and gets the job id of its content (`thumbnail.{tenant}.{hash}`); a burst (a ward's device syncing its
 * photos, an import of many images) shares jobs, and with them the queue's round trips, the tenant's
 * limits read and the records' marks, which cost about as much as sharp's work per image on two cores.
 * Each request is answered with the id of the job that carries it, or with that job's enqueue error.
 */
export class ThumbnailRequests {
  private readonly lanes = new Map<string, TenantLane>();

  constructor(
    private readonly enqueue: EnqueueThumbnails,
    private readonly max = THUMBNAIL_BATCH_MAX,
  ) {}

  request(tenant: string, hash: string): Promise<{ id: string }> {
    let lane = this.lanes.get(tenant);
    if (!lane) {
      lane = { pending: [], busy: false };
      this.lanes.set(tenant, lane);
    }
    const answer = new Promise<{ id: string }>((resolve, reject) => lane.pending.push({ hash, resolve, reject }));
    if (!lane.busy) this.send(tenant, lane);
    return answer;
  }

  /** Enqueues everything pending in jobs of up to `max` distinct contents; sends what came meanwhile after. */
  private send(tenant: string, lane: TenantLane): void {
    const jobs = chunks(lane.pending.splice(0), this.max);
    lane.busy = true;
    void Promise.allSettled(
      jobs.map(async (job) => {
        const [hash, ...more] = [...job.keys()];
        try {
          const queued = await this.enqueue(more.length ? { tenant, hash: hash!, more } : { tenant, hash: hash! });
          for (const waiters of job.values()) for (const w of waiters) w.resolve(queued);
        } catch (e) {
          for (const waiters of job.values()) for (const w of waiters) w.reject(e);
        }
      }),
    ).then(() => {
      lane.busy = false;
      if (lane.pending.length) this.send(tenant, lane);
      else this.lanes.delete(tenant);
    });
  }
}

/** The waiters grouped by content (a content asked twice rides once), at most `max` contents a group. */
function chunks(waiters: readonly Waiter[], max: number): Map<string, Waiter[]>[] {
  const out: Map<string, Waiter[]>[] = [];
  let current = new Map<string, Waiter[]>();
  const placed = new Map<string, Waiter[]>();
  for (const w of waiters) {
    const same = placed.get(w.hash);
    if (same) {
      same.push(w);
      continue;
    }
    if (current.size === max) {
      out.push(current);
      current = new Map();
    }
    const group = [w];
    current.set(w.hash, group);
    placed.set(w.hash, group);
  }
  if (current.size) out.push(current);
  return out;
}
