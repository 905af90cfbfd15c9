import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import type { Response } from 'express';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { Neo4jError } from 'neo4j-driver';
import { clipInput, InvalidInputError, MAX_QUOTED_CHARACTERS, quoteInput } from '../domain/errors.js';
import { isDatabaseUnreachable } from '../graph/database.js';
import { OverloadedError } from '../platform/fairShares.js';
import { RequestTimeoutError } from '../platform/requestScope.js';
import { IngestBusyError, IngestLeaseLostError, IngestRolledBackError, InvalidSnapshotError, SnapshotOrderError } from '../ingest/errors.js';
import { StorageFullError } from '../platform/diskSpace.js';
import type { Logger } from '../platform/logger.js';

/** The driver's own pool wait ran out: the database is up and busy. */
const POOL_EXHAUSTED = /acquisition timed out|Connection acquisition/i;
const OVERLOADED = { code: 'OVERLOADED', message: 'the server is busy; retry shortly', retryAfterSeconds: 2 };
/** A restarted Neo4j answers again within seconds (6.5–15 s measured after a kill): retrying sooner only adds load. */
const SERVICE_UNAVAILABLE = { code: 'SERVICE_UNAVAILABLE', message: 'the database is unreachable right now; try again shortly', retryAfterSeconds: 5 };
/** Codes that mean "not now, retry": answered with 503 over HTTP, so clients and load balancers back off. */
const RETRY_LATER = new Set([OVERLOADED.code, SERVICE_UNAVAILABLE.code]);
const NEO4J_TIMED_OUT = /^Neo\.ClientError\.Transaction\.TransactionTimedOut/;

/** What a client is told about an error it could not have caused, and whether it may retry. */
export function neo4jProblem(error: unknown): { code: string; message: string; retryAfterSeconds?: number } | null {
  if (error instanceof OverloadedError) return { ...OVERLOADED, message: error.message, retryAfterSeconds: error.retryAfterSeconds };
  if (!(error instanceof Neo4jError)) return null;
  if (POOL_EXHAUSTED.test(error.message)) return OVERLOADED;
  if (isDatabaseUnreachable(error)) return SERVICE_UNAVAILABLE;
  if (NEO4J_TIMED_OUT.test(error.code)) return { code: 'QUERY_TIMEOUT', message: "the query ran past the server's time limit (CHRONOQL_QUERY_TIMEOUT_MS)" };
  return null;
}

/** A JSON-quoted run of text, or a word: how graphql-js and its scalars quote back names and values of a query. */
const QUOTED_OR_WORD = /"(?:[^"\\]|\\.)*"|[^\s"]+/g;

/**
 * A message with every long run of caller input in it cut as `quoteInput` cuts it: graphql-js
 * quotes a query's values and names whole ("Variable \"$first\" got invalid value …").
 */
function withInputCut(message: string): string {
  if (message.length <= MAX_QUOTED_CHARACTERS) return message;
  return message.replace(QUOTED_OR_WORD, (run) => {
    if (run.length <= MAX_QUOTED_CHARACTERS) return run;
    if (!run.startsWith('"')) return quoteInput(run);
    try {
      const text: unknown = JSON.parse(run);
      return typeof text === 'string' && text.length <= MAX_QUOTED_CHARACTERS ? run : quoteInput(String(text));
    } catch {
      return quoteInput(run.slice(1, -1));
    }
  });
}

/**
 * graphql-js suggests names it knows ("Did you mean \"search\"?", "Did you mean the enum value
 * \"HYBRID\"?", "Did you mean to use an inline fragment on \"Article\"?"): a map of a schema
 * that production does not let introspection show.
 */
const SUGGESTION = / ?Did you mean [^?]*\?/g;

/**
 * Gives domain errors a stable `extensions.code` (and the input problems, for bad snapshots).
 * Anything unexpected reaches the client as "internal server error" with no stack trace and no
 * database or parser message; development mode adds the original message as `extensions.detail`.
 * Caller input is quoted back cut short, and production suggests no names of the schema.
 */
export function errorFormatter(mode: 'development' | 'production') {
  return (given: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const message = withInputCut(given.message);
    const formatted = { ...given, message: mode === 'production' ? message.replace(SUGGESTION, '') : message };
    const original = unwrapResolverError(error);
    // `http` is the status for Apollo to answer with, not for the client: graphql-ws would send it as it is.
    const { stacktrace: _stacktrace, http: _http, ...extensions } = formatted.extensions ?? {};
    if (original instanceof InvalidSnapshotError) {
      return { ...formatted, extensions: { ...extensions, code: original.code, problems: original.problems } };
    }
    if (
      original instanceof SnapshotOrderError ||
      original instanceof IngestBusyError ||
      original instanceof IngestLeaseLostError ||
      original instanceof IngestRolledBackError ||
      original instanceof StorageFullError
    ) {
      return { ...formatted, extensions: { ...extensions, code: original.code } };
    }
    if (original instanceof RequestTimeoutError) {
      return { message: original.message, path: formatted.path, extensions: { code: original.code } };
    }
    if (original instanceof InvalidInputError) {
      return { ...formatted, extensions: { ...extensions, code: 'BAD_USER_INPUT' } };
    }
    const database = neo4jProblem(original);
    if (database) {
      const retry = database.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: database.retryAfterSeconds };
      return { message: database.message, path: formatted.path, extensions: { code: database.code, ...retry } };
    }
    if (extensions.code !== 'INTERNAL_SERVER_ERROR') return { ...formatted, extensions };
    return {
      message: 'internal server error; the server log has the details',
      path: formatted.path,
      extensions: { code: 'INTERNAL_SERVER_ERROR', ...(mode === 'development' ? { detail: formatted.message } : {}) },
    };
  };
}

/** What carried an operation: GraphQL over HTTP (Apollo) or WebSocket, or an MCP request over HTTP or stdio. */
export type Transport = 'http' | 'websocket' | 'mcp-http' | 'mcp-stdio';

/**
 * An error as Apollo hands it to the formatter: an error with no code is unexpected. Over
 * graphql-ws and MCP (graphql-js without Apollo), an error without a code that wraps no GraphQL
 * error comes from a field's own validation and keeps its message; one that wraps another error
 * is unexpected too.
 */
export function asReported(error: GraphQLError, transport: Transport): GraphQLFormattedError {
  const formatted = error.toJSON();
  if (error.extensions?.code !== undefined) return formatted;
  const unexpected = transport === 'http' || (error.originalError !== undefined && !(error.originalError instanceof GraphQLError));
  return unexpected ? { ...formatted, extensions: { ...formatted.extensions, code: 'INTERNAL_SERVER_ERROR' } } : formatted;
}

/**
 * Logs every error a client is told about, once, with the request id the client can quote, the
 * operation and the field path: one it is told only "internal server error" about at error level
 * with its stack, the others (its own mistakes, refusals, retries) at warn with their code.
 */
export function logClientErrors(
  log: Logger,
  format: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError,
  transport: Transport,
  errors: readonly GraphQLError[],
  request: { requestId: string | null; operationName: string | null | undefined },
): void {
  for (const error of errors) {
    const told = format(asReported(error, transport), error);
    // All three can be the caller's: a WebSocket client names its own subscription ids, and aliases are in the path.
    const where = {
      requestId: request.requestId && clipInput(request.requestId),
      operationName: request.operationName ? clipInput(request.operationName) : null,
      path: error.path?.map((key) => (typeof key === 'string' ? clipInput(key) : key)) ?? null,
      transport,
    };
    if (told.extensions?.code === 'INTERNAL_SERVER_ERROR') log.error({ err: unwrapResolverError(error), ...where }, 'internal error');
    else log.warn({ ...where, code: told.extensions?.code ?? null, message: told.message }, 'request refused');
  }
}

/**
 * An error met before an operation runs (its credential could not be checked, its rate taken) as
 * the client is told it: a database problem with its code and retry delay, not as a refusal.
 */
export function beforeOperationError(error: unknown): GraphQLError {
  const database = neo4jProblem(error);
  if (database) {
    const status = database.retryAfterSeconds === undefined ? 504 : 503;
    return new GraphQLError(database.message, { extensions: { code: database.code, retryAfterSeconds: database.retryAfterSeconds, http: { status } } });
  }
  return error instanceof GraphQLError
    ? error
    : new GraphQLError('internal server error; the server log has the details', {
        originalError: error as Error,
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      });
}

/** An error answered before GraphQL runs (auth, limits, a bad body), in the same JSON shape. */
export function sendError(response: Response, status: number, code: string, message: string): void {
  response.status(status).json({ errors: [{ message, extensions: { code } }] });
}

/**
 * An error that says when to retry (RATE_LIMITED, OVERLOADED, SERVICE_UNAVAILABLE) also says it
 * in Retry-After, and an operation shed for load or refused while Neo4j is unreachable answers
 * 503, so a client backs off and a load balancer can send it elsewhere.
 */
export function retryAfterPlugin<TContext extends BaseContext>(): ApolloServerPlugin<TContext> {
  return {
    requestDidStart: async () => ({
      willSendResponse: async ({ response }) => {
        if (response.body.kind !== 'single') return;
        const errors = response.body.singleResult.errors ?? [];
        const retryAfter = errors.map((error) => error.extensions?.retryAfterSeconds).find((seconds) => typeof seconds === 'number');
        if (retryAfter === undefined) return;
        response.http.headers.set('retry-after', String(retryAfter));
        if (errors.some((error) => RETRY_LATER.has(String(error.extensions?.code)))) response.http.status = 503;
      },
    }),
  };
}
