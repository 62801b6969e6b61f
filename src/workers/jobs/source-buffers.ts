/**
 * The buffers a node's thumbnail sources are read into, used again from one image to the next (decision
 * 1189): a source read into a new buffer each time is external memory V8 answers with full collections
 * (decision 1150), where a few buffers kept and filled again cost nothing after the first images. A buffer
 * is taken inside a render slot and handed back when its image is done, so the buffers in use are at most
 * the node's slots; at most `keep` free ones are kept, none larger than `maxBytes`, and all are let go
 * after `idleMs` without a source read.
 */
export class SourceBuffers {
  private readonly free: Buffer[] = [];
  /** The memory of the buffers this pool made: only those come back into it. */
  private readonly made = new WeakSet<ArrayBufferLike>();
  private lastTaken = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly maxBytes: number,
    private readonly keep: number,
    private readonly idleMs = 30_000,
  ) {}

  /** A buffer of at least `size` bytes: a free one, else a new one of whole MiB (of `size` past `maxBytes`, not kept). */
  readonly take = (size: number): Buffer => {
    this.lastTaken = Date.now();
    const i = this.free.findIndex((b) => b.length >= size);
    if (i >= 0) return this.free.splice(i, 1)[0]!;
    if (size > this.maxBytes) return Buffer.allocUnsafeSlow(size);
    const made = Buffer.allocUnsafeSlow(Math.min(this.maxBytes, Math.max(MIB, Math.ceil(size / MIB) * MIB)));
    this.made.add(made.buffer);
    return made;
  };

  /** Hands back what `take` gave (or a view of it) once nothing reads it any more; anything else is ignored. */
  give(view: Buffer): void {
    if (!this.made.has(view.buffer) || this.free.length >= this.keep) return;
    const whole = Buffer.from(view.buffer, 0, view.buffer.byteLength);
    if (this.free.some((b) => b.buffer === whole.buffer)) return;
    this.free.push(whole);
    this.timer ??= setTimeout(() => this.release(), this.idleMs).unref();
  }

  /** How many free buffers are kept (for tests and metrics). */
  get kept(): number {
    return this.free.length;
  }

  private release(): void {
    this.timer = undefined;
    const idle = Date.now() - this.lastTaken;
    if (idle >= this.idleMs) this.free.length = 0;
    else if (this.free.length) this.timer = setTimeout(() => this.release(), this.idleMs - idle).unref();
  }
}

const MIB = 1024 * 1024;
