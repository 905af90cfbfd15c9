/**
 * What one request may ask, checked before any database work (graphql-armor's validation
 * rules): how deep a selection nests, how many aliases and tokens it has and what it costs.
 * A ten-level fact → article → facts query or ten thousand aliases of `search` used to run the
 * server out of memory or connections.
 */
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { CallerUsage, RateUsageRepository } from '../graph/rateUsageRepository.js';
import type { Logger } from '../platform/logger.js';

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxCost: number;
  maxDirectives: number;
  maxResponseFields: number;
  maxResponseTextChars: number;
  requestBudgetMs: number;
  maxBodyBytes: number;
}

export const QUERY_LIMITS: Readonly<QueryLimits> = {
  maxDepth: 10,
  maxAliases: 20,
  maxTokens: 4000,
  /** The estimated cost of one operation (queryCost.ts): a batch of 256 questions fits, a fan-out over lists does not. */
  maxCost: 50_000,
  maxDirectives: 50,
  /** Fields one response may resolve, and characters of text it may carry, before it is cut off. */
  maxResponseFields: 200_000,
  maxResponseTextChars: 16_000_000,
  /**
   * One request's wall time: past it, the request waits no more for a database session and
   * resolves no more fields (it is cut off with QUERY_TIMEOUT).
   */
  requestBudgetMs: 60_000,
  /** Request bodies above this are refused with 413 (a query plus its variables, not a snapshot). */
  maxBodyBytes: 1_048_576,
};

export function queryArmor(): ReturnType<ApolloArmor['protect']> {
  return new ApolloArmor({
    maxDepth: { n: QUERY_LIMITS.maxDepth },
    maxAliases: { n: QUERY_LIMITS.maxAliases },
    // graphql-js counts tokens while parsing (parseOptions.maxTokens): a refusal is then a 400
    // parse error, where armor's own check surfaces as a 500.
    maxTokens: { enabled: false },
    // queryCost.ts estimates cost with list sizes, which graphql-armor's cost limit cannot count.
    costLimit: { enabled: false },
    maxDirectives: { n: QUERY_LIMITS.maxDirectives },
  }).protect();
}

/** The same rules for subscriptions over WebSocket, which do not pass through Apollo. */
export function validateWithLimits(rules: readonly ValidationRule[]): (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[] {
  return (schema, document) => validate(schema, document, [...specifiedRules, ...rules]);
}

const WINDOW_MS = 60_000;
const windowOf = (at: number): number => Math.floor(at / WINDOW_MS);

/**
 * What each caller spent in the current clock minute on every server of the store. Each server
 * counts its own callers and swaps its counts for the others' through Neo4j every `syncMs`, so
 * a budget holds across replicas give or take what the others served since the last swap.
 */
export class SharedRateLedger {
  private window = windowOf(Date.now());
  private readonly mine = new Map<string, CallerUsage>();
  private others = new Map<string, CallerUsage>();
  /** Callers whose counts changed since the last swap: only they are written. */
  private readonly dirty = new Set<string>();
  private failing = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly server: string,
    private readonly store: Pick<RateUsageRepository, 'exchange' | 'forgetBefore'>,
    private readonly log: Logger,
  ) {}

  start(syncMs: number): void {
    let inFlight = false;
    // A swap slower than syncMs is not overtaken by the next one.
    this.timer = setInterval(() => {
      if (inFlight) return;
      inFlight = true;
      void this.sync().finally(() => (inFlight = false));
    }, syncMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Adds to the caller's count and returns what it has spent on all servers this minute. */
  spend(caller: string, requests: number, cost: number): { requests: number; cost: number; msLeftInWindow: number } {
    this.roll();
    const own = this.mine.get(caller) ?? { caller, requests: 0, cost: 0 };
    own.requests += requests;
    own.cost += cost;
    this.mine.set(caller, own);
    this.dirty.add(caller);
    const other = this.others.get(caller);
    return { requests: own.requests + (other?.requests ?? 0), cost: own.cost + (other?.cost ?? 0), msLeftInWindow: (this.window + 1) * WINDOW_MS - Date.now() };
  }

  async sync(): Promise<void> {
    this.roll();
    const window = this.window;
    const changed = [...this.dirty].map((caller) => ({ ...this.mine.get(caller)! }));
    this.dirty.clear();
    try {
      const others = await this.store.exchange(this.server, window, changed);
      if (window === this.window) this.others = new Map(others.map((usage) => [usage.caller, usage]));
      if (this.failing) this.log.info('sharing rate-limit counts with the other servers again');
      this.failing = false;
    } catch (error) {
      for (const { caller } of changed) if (window === this.window) this.dirty.add(caller);
      if (!this.failing) this.log.warn({ err: error }, 'could not share rate-limit counts with the other servers; counting this server alone until it can');
      this.failing = true;
    }
  }

  private roll(): void {
    const now = windowOf(Date.now());
    if (now === this.window) return;
    this.window = now;
    this.mine.clear();
    this.others.clear();
    this.dirty.clear();
    void this.store.forgetBefore(now - 1).catch((error: unknown) => this.log.debug({ err: error }, 'could not drop old rate-limit counts'));
  }
}

/**
 * Per caller (an API key, a token subject, or an anonymous client's address) and per minute: how
 * many operations, and how much estimated cost, so one caller's heavy queries spend its budget
 * faster than its light ones. Over either: RATE_LIMITED with the seconds until the next is allowed.
 * With a shared ledger the budgets count what the caller spent on every server of the store.
 */
export class RequestRateLimiter {
  private readonly requests: RateLimiterMemory;
  private readonly cost: RateLimiterMemory;

  constructor(
    readonly perMinute: number,
    readonly costPerMinute: number,
    private readonly ledger: SharedRateLedger | null = null,
  ) {
    this.requests = new RateLimiterMemory({ points: perMinute, duration: 60 });
    this.cost = new RateLimiterMemory({ points: costPerMinute, duration: 60 });
  }

  /** One operation. */
  async take(caller: string): Promise<void> {
    await consume(this.requests, caller, 1, `over ${this.perMinute} requests per minute`);
    const spent = this.ledger?.spend(caller, 1, 0);
    if (spent && spent.requests > this.perMinute) throw rateLimited(`over ${this.perMinute} requests per minute on all servers`, spent.msLeftInWindow);
  }

  /** An operation's estimated cost (at least 1). */
  async charge(caller: string, cost: number): Promise<void> {
    const points = Math.max(1, Math.ceil(cost));
    await consume(this.cost, caller, points, `over the cost budget of ${this.costPerMinute} per minute`);
    const spent = this.ledger?.spend(caller, 0, points);
    if (spent && spent.cost > this.costPerMinute)
      throw rateLimited(`over the cost budget of ${this.costPerMinute} per minute on all servers`, spent.msLeftInWindow);
  }
}

function rateLimited(what: string, msBeforeNext: number): GraphQLError {
  const retryAfterSeconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new GraphQLError(`${what}; retry in ${retryAfterSeconds} s`, { extensions: { code: 'RATE_LIMITED', retryAfterSeconds, http: { status: 429 } } });
}

async function consume(limiter: RateLimiterMemory, caller: string, points: number, what: string): Promise<void> {
  try {
    await limiter.consume(caller, points);
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    throw rateLimited(what, refusal.msBeforeNext);
  }
}

/**
 * Cuts off a request that outgrows its budget while it runs: past the limits' fields or
 * characters of text (RESPONSE_TOO_LARGE), or past its wall time (QUERY_TIMEOUT). A query the
 * cost estimate let through still cannot take the server's memory (a response past V8's longest
 * string failed as HTTP 500 "Invalid string length") nor run on for minutes. The cut-off
 * response carries no data and one error, whatever number of fields were refused.
 */
export function responseBudgetPlugin<TContext extends BaseContext>(
  limits: Pick<QueryLimits, 'maxResponseFields' | 'maxResponseTextChars' | 'requestBudgetMs'>,
): ApolloServerPlugin<TContext> {
  return {
    requestDidStart: async () => {
      const deadline = Date.now() + limits.requestBudgetMs;
      let fields = 0;
      let textChars = 0;
      let cutOff: GraphQLError | null = null;
      return {
        executionDidStart: async () => ({
          willResolveField: ({ info }) => {
            fields += 1;
            if (fields > limits.maxResponseFields) cutOff ??= responseTooLarge(`${limits.maxResponseFields} fields`);
            // A root field's own database work is bounded by the same deadline through its
            // sessions (and shed as OVERLOADED); the fields below it are what a query piles up.
            if (info.path.prev !== undefined && Date.now() > deadline) cutOff ??= timedOut(limits.requestBudgetMs);
            if (cutOff) throw cutOff;
            return (_error, result) => {
              if (typeof result === 'string') textChars += result.length;
              if (textChars > limits.maxResponseTextChars) cutOff ??= responseTooLarge(`${limits.maxResponseTextChars} characters of text`);
            };
          },
        }),
        willSendResponse: async ({ response }) => {
          if (!cutOff || response.body.kind !== 'single') return;
          response.body.singleResult.data = null;
          response.body.singleResult.errors = [cutOff.toJSON()];
          response.http.status = cutOff.extensions.code === RESPONSE_TOO_LARGE ? 400 : 504;
        },
      };
    },
  };
}

const RESPONSE_TOO_LARGE = 'RESPONSE_TOO_LARGE';

function responseTooLarge(overBy: string): GraphQLError {
  return new GraphQLError(`the response would hold more than ${overBy}; ask for fewer items or fields`, { extensions: { code: RESPONSE_TOO_LARGE } });
}

function timedOut(budgetMs: number): GraphQLError {
  return new GraphQLError(`the request ran past its ${budgetMs / 1000} s of wall time and was cut off; ask for fewer items or fields`, {
    extensions: { code: 'QUERY_TIMEOUT' },
  });
}
