import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whose work is running and until when. The API opens a scope for each operation (over every
 * transport); everything the operation starts runs inside it, so the layers below can share
 * database sessions and CPU fairly between callers and stop at the request's deadline without
 * each call passing them along.
 */
export interface RequestScope {
  /** Whose budgets the work spends: an API key, a token subject or an anonymous address prefix. */
  caller: string;
  /** Epoch ms after which the request's work stops. */
  deadline: number;
}

/**
 * The request ran past its wall time: work checks the deadline between units (questions,
 * searches, batches) and stops with this rather than finishing what nobody will receive.
 */
export class RequestTimeoutError extends Error {
  readonly code = 'QUERY_TIMEOUT';

  constructor(readonly budgetMs: number | null) {
    super(`the request ran past its ${budgetMs === null ? '' : `${budgetMs / 1000} s of `}wall time and was cut off; ask for fewer items or fields`);
    this.name = 'RequestTimeoutError';
  }
}

/** The scope, and the wall time it was opened with (for messages). */
const scopes = new AsyncLocalStorage<{ scope: RequestScope; budgetMs: number | null }>();

/** Runs `work`, and everything it starts, as `caller`'s until `deadline`. */
export function inRequestScope<T>(scope: RequestScope, work: () => T): T {
  return scopes.run({ scope, budgetMs: Number.isFinite(scope.deadline) ? Math.max(0, scope.deadline - Date.now()) : null }, work);
}

/** The scope of the work running now; undefined for work no request started (ingest jobs, workers, the CLI). */
export function currentRequestScope(): RequestScope | undefined {
  return scopes.getStore()?.scope;
}

/** The error for the request running now having run past its deadline. */
export function requestTimedOut(): RequestTimeoutError {
  return new RequestTimeoutError(scopes.getStore()?.budgetMs ?? null);
}

/** Throws RequestTimeoutError when the request running now is past its deadline. */
export function checkRequestDeadline(): void {
  const scope = currentRequestScope();
  if (scope && Date.now() > scope.deadline) throw requestTimedOut();
}

/**
 * Runs `work` outside any request: what a request starts for everyone (a job that outlives it, a
 * shared poll) is bound by neither its caller's shares nor its deadline.
 */
export function outsideRequestScope<T>(work: () => T): T {
  return scopes.exit(work);
}
