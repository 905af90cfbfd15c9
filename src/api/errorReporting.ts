import { unwrapResolverError } from '@apollo/server/errors';
import type { Response } from 'express';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { Neo4jError } from 'neo4j-driver';
import { IngestBusyError, IngestLeaseLostError, InvalidSnapshotError, SnapshotOrderError } from '../ingest/errors.js';
import { StorageFullError } from '../platform/diskSpace.js';
import type { Logger } from '../platform/logger.js';

/** Driver codes for a Neo4j that cannot be reached (down, restarting, or no connection free in time). */
const NEO4J_UNAVAILABLE = new Set(['ServiceUnavailable', 'SessionExpired', 'Neo.ClientError.Cluster.NotALeader']);
const NEO4J_TIMED_OUT = /^Neo\.ClientError\.Transaction\.TransactionTimedOut/;

/** What a client is told about an error it could not have caused, and whether it may retry. */
export function neo4jProblem(error: unknown): { code: string; message: string } | null {
  if (!(error instanceof Neo4jError)) return null;
  if (NEO4J_UNAVAILABLE.has(error.code) || /acquisition timed out|Connection acquisition/i.test(error.message)) {
    return { code: 'SERVICE_UNAVAILABLE', message: 'the database is unreachable right now; try again shortly' };
  }
  if (NEO4J_TIMED_OUT.test(error.code)) return { code: 'QUERY_TIMEOUT', message: 'the query ran past the server\'s time limit (CHRONOQL_QUERY_TIMEOUT_MS)' };
  return null;
}

/**
 * Gives domain errors a stable `extensions.code` (and the input problems, for bad snapshots).
 * Anything unexpected reaches the client as "internal server error" with no stack trace and no
 * database or parser message; development mode adds the original message as `extensions.detail`.
 */
export function errorFormatter(mode: 'development' | 'production') {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    const { stacktrace: _stacktrace, ...extensions } = formatted.extensions ?? {};
    if (original instanceof InvalidSnapshotError) {
      return { ...formatted, extensions: { ...extensions, code: original.code, problems: original.problems } };
    }
    if (original instanceof SnapshotOrderError || original instanceof IngestBusyError || original instanceof IngestLeaseLostError || original instanceof StorageFullError) {
      return { ...formatted, extensions: { ...extensions, code: original.code } };
    }
    if (original instanceof RangeError) {
      return { ...formatted, extensions: { ...extensions, code: 'BAD_USER_INPUT' } };
    }
    const database = neo4jProblem(original);
    if (database) return { message: database.message, path: formatted.path, extensions: { code: database.code } };
    if (extensions.code !== 'INTERNAL_SERVER_ERROR') return { ...formatted, extensions };
    return {
      message: 'internal server error; the server log has the details',
      path: formatted.path,
      extensions: { code: 'INTERNAL_SERVER_ERROR', ...(mode === 'development' ? { detail: formatted.message } : {}) },
    };
  };
}

/**
 * An error as Apollo hands it to the formatter: an error with no code is unexpected. Over
 * graphql-ws, an error without a code that wraps no GraphQL error comes from a field's own
 * validation and keeps its message; one that wraps another error is unexpected too.
 */
export function asReported(error: GraphQLError, transport: 'http' | 'websocket'): GraphQLFormattedError {
  const formatted = error.toJSON();
  if (error.extensions?.code !== undefined) return formatted;
  const unexpected = transport === 'http' || (error.originalError !== undefined && !(error.originalError instanceof GraphQLError));
  return unexpected ? { ...formatted, extensions: { ...formatted.extensions, code: 'INTERNAL_SERVER_ERROR' } } : formatted;
}

/**
 * Logs, once and at error level, each error that a client is told only "internal server error"
 * about: its stack, the request id the client can quote, the operation and the field path.
 */
export function logMaskedErrors(
  log: Logger,
  format: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError,
  transport: 'http' | 'websocket',
  errors: readonly GraphQLError[],
  request: { requestId: string | null; operationName: string | null | undefined },
): void {
  for (const error of errors) {
    if (format(asReported(error, transport), error).extensions?.code !== 'INTERNAL_SERVER_ERROR') continue;
    log.error({ err: unwrapResolverError(error), requestId: request.requestId, operationName: request.operationName ?? null, path: error.path ?? null, transport }, 'internal error');
  }
}

/** An error answered before GraphQL runs (auth, limits, a bad body), in the same JSON shape. */
export function sendError(response: Response, status: number, code: string, message: string): void {
  response.status(status).json({ errors: [{ message, extensions: { code } }] });
}
