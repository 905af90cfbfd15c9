/**
 * What one request may ask, checked before any database work (graphql-armor's validation
 * rules): how deep a selection nests, how many aliases and tokens it has and what it costs.
 * A ten-level fact → article → facts query or ten thousand aliases of `search` used to run the
 * server out of memory or connections.
 */
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { specifiedRules, validate, type DocumentNode, type GraphQLError, type GraphQLSchema, type ValidationRule } from 'graphql';

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
    maxTokens: { n: QUERY_LIMITS.maxTokens },
    costLimit: { maxCost: QUERY_LIMITS.maxCost },
    maxDirectives: { n: QUERY_LIMITS.maxDirectives },
  }).protect();
}

/** The same rules for subscriptions over WebSocket, which do not pass through Apollo. */
export function validateWithLimits(rules: readonly ValidationRule[]): (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[] {
  return (schema, document) => validate(schema, document, [...specifiedRules, ...rules]);
}
