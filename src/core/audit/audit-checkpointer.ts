import type { Logger } from '../../observability/logger.js';
import type { AuditService } from './audit.service.js';

export interface AuditCheckpointerDeps {
  audit: Pick<AuditService, 'checkpoint'>;
  /** Names of the tenants whose chains to sign. */
  tenants(): Promise<string[]>;
  /** Claims this period for this node (Redis SET NX with a time to live); false when another node has it. */
  claimTurn(ttlMs: number): Promise<boolean>;
  intervalMs: number;
  logger: Logger;
}

/**
 * Signs the new entries of every tenant's audit chain once per period (decisions 881, 1020; a minute by
 * default). Every workers node runs a timer; the one that claims the period's turn signs, the others
 * skip, so a period costs one pass whatever the number of nodes. A tenant with nothing new costs a Redis
 * read and one indexed query, and nothing is signed. A tenant whose new entries do not link to the last
 * checkpoint is logged, not signed.
 */
export class AuditCheckpointer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly deps: AuditCheckpointerDeps) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = undefined));
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One period: claims the turn, then signs each tenant's new entries; `signed` counts the tenants that had some. */
  async tick(): Promise<{ signed: number; failed: string[] } | undefined> {
    const log = this.deps.logger;
    try {
      if (!(await this.deps.claimTurn(Math.max(1000, this.deps.intervalMs - 1000)))) return undefined;
      let signed = 0;
      const failed: string[] = [];
      const started = Date.now();
      for (const tenant of await this.deps.tenants()) {
        try {
          const last = await this.deps.audit.checkpoint(tenant);
          if (last && last.createdAt.getTime() >= started) signed++;
        } catch (e) {
          failed.push(tenant);
          log.error({ component: 'audit', tenant, err: e }, 'audit checkpoint refused');
        }
      }
      if (signed || failed.length)
        log.info({ component: 'audit', signed, failed: failed.length }, 'audit checkpoints signed');
      return { signed, failed };
    } catch (e) {
      log.warn({ component: 'audit', err: e }, 'audit checkpoint pass failed');
      return undefined;
    }
  }
}
