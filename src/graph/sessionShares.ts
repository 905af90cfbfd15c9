import { AsyncLocalStorage } from 'node:async_hooks';

/** Who the Cypher running now is for: an API caller (its rate-limit key), and when its request gives up. */
export interface CallerScope {
  caller: string;
  /** Epoch ms after which a request's Cypher waits no longer for a session. */
  deadline: number;
}

/**
 * Thrown when a caller's Cypher cannot get a session in time because the pool is busy: the
 * database is up, the server is shedding load. Not a driver error, so it is never mistaken for
 * Neo4j being down.
 */
export class DatabaseOverloadedError extends Error {
  readonly code = 'OVERLOADED';

  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

export interface SessionShareLimits {
  /** Sessions open at once in all (the driver's pool size, so the driver itself never queues). */
  total: number;
  /** Sessions open at once for one caller: one caller's batch cannot take the whole pool. */
  perCaller: number;
  /** How long a caller's Cypher waits for a session while the whole pool is taken, before the request is refused as OVERLOADED. */
  waitMs: number;
}

interface Waiter {
  grant(): void;
}

/**
 * Shares the driver's sessions fairly between callers. Work started inside `withCaller` counts
 * against that caller's share and waits in its own queue; queues are served in turn, so a caller
 * with a thousand pending searches does not hold back another caller's single lookup. Work with
 * no caller (ingest, the embedding worker, migrations) only counts against the total.
 */
export class SessionShares {
  private readonly scope = new AsyncLocalStorage<CallerScope>();
  private open = 0;
  private readonly openByCaller = new Map<string, number>();
  /** Waiting callers in turn order; each caller's own waiters in arrival order. */
  private readonly queues = new Map<string, Waiter[]>();

  constructor(readonly limits: SessionShareLimits) {}

  /** Runs `work` (and everything it starts) as `caller`'s. */
  withCaller<T>(scope: CallerScope, work: () => T): T {
    return this.scope.run(scope, work);
  }

  /**
   * Runs `work` (and everything it starts) as no caller's, also when started from a caller's
   * request: work that outlives the request (an ingest the request started) is not bound by its
   * deadline or its share.
   */
  withoutCaller<T>(work: () => T): T {
    return this.scope.exit(work);
  }

  /** The caller of the work running now, if any. */
  current(): CallerScope | undefined {
    return this.scope.getStore();
  }

  async use<T>(work: () => Promise<T>): Promise<T> {
    const scope = this.scope.getStore();
    const key = scope?.caller ?? '';
    await this.acquire(key, scope);
    try {
      return await work();
    } finally {
      this.release(key);
    }
  }

  private mayOpen(key: string): boolean {
    if (this.open >= this.limits.total) return false;
    return key === '' || (this.openByCaller.get(key) ?? 0) < this.limits.perCaller;
  }

  private take(key: string): void {
    this.open += 1;
    this.openByCaller.set(key, (this.openByCaller.get(key) ?? 0) + 1);
  }

  private acquire(key: string, scope: CallerScope | undefined): Promise<void> {
    if (this.mayOpen(key) && !this.queues.has(key)) {
      this.take(key);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      // Waiting behind one's own share is the caller's pacing, bounded by its request's deadline;
      // waiting because the whole pool is taken is load, and is shed sooner.
      const poolFull = this.open >= this.limits.total;
      const waitMs = scope ? Math.max(0, Math.min(poolFull ? this.limits.waitMs : Number.POSITIVE_INFINITY, scope.deadline - Date.now())) : null;
      const timer =
        waitMs === null
          ? null
          : setTimeout(() => {
              this.dropWaiter(key, waiter);
              const why = poolFull ? `no database session came free within ${waitMs} ms` : 'the request used up its time for database work';
              reject(new DatabaseOverloadedError(`the server is busy: ${why}; retry shortly`, 2));
            }, waitMs);
      const waiter: Waiter = {
        grant: () => {
          if (timer) clearTimeout(timer);
          this.take(key);
          resolve();
        },
      };
      const queue = this.queues.get(key);
      if (queue) queue.push(waiter);
      else this.queues.set(key, [waiter]);
    });
  }

  private release(key: string): void {
    this.open -= 1;
    const left = (this.openByCaller.get(key) ?? 1) - 1;
    if (left === 0) this.openByCaller.delete(key);
    else this.openByCaller.set(key, left);
    this.grantWaiting();
  }

  /** Serves waiting callers in turn: a served caller goes to the back of the line. */
  private grantWaiting(): void {
    for (const [key, queue] of [...this.queues]) {
      if (this.open >= this.limits.total) return;
      if (!this.mayOpen(key)) continue;
      const waiter = queue.shift()!;
      this.queues.delete(key);
      if (queue.length > 0) this.queues.set(key, queue);
      waiter.grant();
    }
  }

  private dropWaiter(key: string, waiter: Waiter): void {
    const queue = this.queues.get(key);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) this.queues.delete(key);
  }
}
