import { checkRequestDeadline, currentRequestScope, requestTimedOut, type RequestScope } from './requestScope.js';

/**
 * Work shed for load: the server is up and busy. Told to clients as OVERLOADED (503, with
 * Retry-After), never as the service being down.
 */
export class OverloadedError extends Error {
  readonly code = 'OVERLOADED';

  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'OverloadedError';
  }
}

export interface FairShareLimits {
  /** Units of work in flight at once in all. */
  total: number;
  /** Units in flight at once for one caller. */
  perCaller: number;
  /** How long a caller's unit waits while every unit is taken, before it is shed as OVERLOADED. */
  waitMs: number;
  /** Units one caller may have waiting; more are shed at once (default: no bound). */
  queuePerCaller?: number;
}

/** Runs a unit of work when its caller's turn comes. */
export type Admission = <T>(work: () => Promise<T>) => Promise<T>;

/** Runs every unit at once: for tools that serve no callers. */
export const admitAll: Admission = (work) => work();

interface Waiter {
  grant(): void;
}

/**
 * Shares a limited resource (database sessions, CPU slots) fairly between callers. Work runs as
 * the caller of the request scope it was started in and waits in that caller's own queue; queues
 * are served in turn, so a caller with a thousand pending units does not hold back another
 * caller's single one. Work with no caller (ingest jobs, workers) only counts against the total.
 * A request past its deadline starts no more units: it stops with RequestTimeoutError.
 */
export class FairShares {
  private open = 0;
  private readonly openByCaller = new Map<string, number>();
  /** Waiting callers in turn order; each caller's own waiters in arrival order. */
  private readonly queues = new Map<string, Waiter[]>();

  constructor(
    readonly limits: FairShareLimits,
    /** What the shares are of, for refusals ("database sessions", "CPU slots"). */
    private readonly what: string,
  ) {}

  use = async <T>(work: () => Promise<T>): Promise<T> => {
    const release = await this.hold();
    try {
      return await work();
    } finally {
      release();
    }
  };

  /**
   * Takes a unit for work that is not one promise (a page of changes handed out event by event)
   * and gives back what releases it; call that exactly once.
   */
  hold = async (): Promise<() => void> => {
    checkRequestDeadline();
    const scope = currentRequestScope();
    const key = scope?.caller ?? '';
    await this.acquire(key, scope);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(key);
    };
  };

  /** Units in flight now, and units waiting (for metrics and tests). */
  get load(): { inFlight: number; waiting: number } {
    let waiting = 0;
    for (const queue of this.queues.values()) waiting += queue.length;
    return { inFlight: this.open, waiting };
  }

  private mayOpen(key: string): boolean {
    if (this.open >= this.limits.total) return false;
    return key === '' || (this.openByCaller.get(key) ?? 0) < this.limits.perCaller;
  }

  private take(key: string): void {
    this.open += 1;
    this.openByCaller.set(key, (this.openByCaller.get(key) ?? 0) + 1);
  }

  private acquire(key: string, scope: RequestScope | undefined): Promise<void> {
    const queue = this.queues.get(key);
    if (this.mayOpen(key) && !queue) {
      this.take(key);
      return Promise.resolve();
    }
    const bound = this.limits.queuePerCaller;
    if (key !== '' && bound !== undefined && (queue?.length ?? 0) >= bound) {
      return Promise.reject(
        new OverloadedError(`the server is busy: this caller already has ${bound} units of work waiting for ${this.what}; retry shortly`, 2),
      );
    }
    return new Promise<void>((resolve, reject) => {
      // Waiting behind one's own share is the caller's pacing, bounded by its request's deadline
      // (QUERY_TIMEOUT); waiting because every unit is taken is load, and is shed sooner (OVERLOADED).
      const full = this.open >= this.limits.total;
      const untilDeadline = scope ? Math.max(0, scope.deadline - Date.now()) : Number.POSITIVE_INFINITY;
      const loadWaitMs = full ? this.limits.waitMs : Number.POSITIVE_INFINITY;
      const waitMs = Math.min(untilDeadline, loadWaitMs);
      const timer = Number.isFinite(waitMs)
        ? setTimeout(() => {
            this.dropWaiter(key, waiter);
            if (untilDeadline <= loadWaitMs) reject(requestTimedOut());
            else reject(new OverloadedError(`the server is busy: no ${this.what} came free within ${waitMs} ms; retry shortly`, 2));
          }, waitMs)
        : null;
      const waiter: Waiter = {
        grant: () => {
          if (timer) clearTimeout(timer);
          this.take(key);
          resolve();
        },
      };
      if (queue) queue.push(waiter);
      else this.queues.set(key, [waiter]);
    });
  }

  private release(key: string): void {
    this.open -= 1;
    const left = (this.openByCaller.get(key) ?? 1) - 1;
    if (left === 0) this.openByCaller.delete(key);
    else this.openByCaller.set(key, left);
    // The caller that just had a turn waits behind the others for its next one.
    const queue = this.queues.get(key);
    if (queue) {
      this.queues.delete(key);
      this.queues.set(key, queue);
    }
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
