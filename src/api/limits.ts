/**
 * What one request may ask, checked before any database work (graphql-armor's validation
 * rules): how deep a selection nests, how many aliases and tokens it has and what it costs.
 * A ten-level fact → article → facts query or ten thousand aliases of `search` used to run the
 * server out of memory or connections.
 */
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

export const QUERY_LIMITS = {
  maxDepth: 10,
  maxAliases: 20,
  maxTokens: 4000,
  maxCost: 15_000,
  maxDirectives: 50,
  /** Request bodies above this are refused with 413 (a query plus its variables, not a snapshot). */
  maxBodyBytes: 1_048_576,
} as const;

export function queryArmor(): ReturnType<ApolloArmor['protect']> {
  return new ApolloArmor({
    maxDepth: { n: QUERY_LIMITS.maxDepth },
    maxAliases: { n: QUERY_LIMITS.maxAliases },
    // graphql-js counts tokens while parsing (parseOptions.maxTokens): a refusal is then a 400
    // parse error, where armor's own check surfaces as a 500.
    maxTokens: { enabled: false },
    costLimit: { maxCost: QUERY_LIMITS.maxCost },
    maxDirectives: { n: QUERY_LIMITS.maxDirectives },
  }).protect();
}

/** The same rules for subscriptions over WebSocket, which do not pass through Apollo. */
export function validateWithLimits(rules: readonly ValidationRule[]): (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[] {
  return (schema, document) => validate(schema, document, [...specifiedRules, ...rules]);
}

/**
 * Operations per minute per caller (an API key, a token subject, or an anonymous client's
 * address), refused with RATE_LIMITED and the seconds until the next one is allowed.
 */
export class RequestRateLimiter {
  private readonly limiter: RateLimiterMemory;

  constructor(readonly perMinute: number) {
    this.limiter = new RateLimiterMemory({ points: perMinute, duration: 60 });
  }

  async take(caller: string): Promise<void> {
    try {
      await this.limiter.consume(caller);
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      const retryAfterSeconds = Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
      throw new GraphQLError(`over ${this.perMinute} requests per minute; retry in ${retryAfterSeconds} s`, {
        extensions: { code: 'RATE_LIMITED', retryAfterSeconds, http: { status: 429 } },
      });
    }
  }
}
