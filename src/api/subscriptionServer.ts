/**
 * graphql-ws subscriptions on the HTTP server's port and path: who may connect, how many, and
 * for how long. A connection must show a valid credential within a few seconds, keeps it valid
 * for as long as it subscribes, and must read what it is sent.
 */
import type { IncomingMessage, Server } from 'node:http';
import {
  execute,
  GraphQLError,
  parse,
  subscribe,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { unauthenticated, type Authenticator, type Principal } from './auth.js';
import type { ApiHost, RequestContext } from './context.js';
import { asReported, beforeOperationError, logClientErrors, type errorFormatter } from './errorReporting.js';
import { QUERY_LIMITS, validateWithLimits } from './limits.js';
import type { Metrics } from './metrics.js';
import { ResponseBudget, type ResponseLimits } from './responseBudget.js';
import type { Logger } from '../platform/logger.js';
import { inRequestScope, type RequestScope } from '../platform/requestScope.js';

export interface SubscriptionSettings {
  /**
   * Open WebSocket connections in all; more are refused at the upgrade with 503. At most a
   * quarter of them may be connections that have not shown a valid credential yet, so sockets
   * that never authenticate cannot take the places of those that do.
   */
  maxConnections: number;
  /** Open WebSocket connections from one client address; more are refused at the upgrade with 429. */
  maxConnectionsPerAddress: number;
  /** How long a connection may take to send `connection_init` and, when it carries no credential, to subscribe with one. */
  initTimeoutMs: number;
  /** Sockets are pinged this often, and dropped when no pong comes back within as long. */
  keepAliveMs: number;
  /** How often open subscriptions' credentials are checked again (a revoked key also waits out the key cache). */
  credentialRecheckMs: number;
  /** A subscriber whose socket has not taken a message for this long is cut off. */
  slowSubscriberMs: number;
  /** Operations open at once on one connection, and for one caller on all its connections. */
  maxOperationsPerConnection: number;
  maxOperationsPerCaller: number;
}

export const DEFAULT_SUBSCRIPTION_SETTINGS: SubscriptionSettings = {
  maxConnections: 1_000,
  maxConnectionsPerAddress: 50,
  initTimeoutMs: 3_000,
  keepAliveMs: 12_000,
  credentialRecheckMs: 5_000,
  // Below the keep-alive's 12–24 s, so a reader that stopped hears why before its pong is missed.
  slowSubscriberMs: 10_000,
  maxOperationsPerConnection: 20,
  maxOperationsPerCaller: 50,
};

/** The share of the connection cap that connections without a credential yet may hold. */
const UNAUTHENTICATED_SHARE = 0.25;
/** Connections without a credential yet from one client address (prefix). */
const UNAUTHENTICATED_PER_ADDRESS = 8;

/** Close codes (application range): graphql-ws's own 4401 for credentials, 4429 for the rate limit, 4008 for a subscriber that stopped reading. */
export const UNAUTHORIZED_CLOSE_CODE = 4401;
export const RATE_LIMITED_CLOSE_CODE = 4429;
export const SLOW_SUBSCRIBER_CLOSE_CODE = 4008;
/** RFC 6455's "Try Again Later": the credential could not be checked because Neo4j is unreachable. */
export const TRY_AGAIN_LATER_CLOSE_CODE = 1013;

/**
 * Results executed ahead of the one being sent: their field loads batch together (one round trip
 * for the articles of many changes instead of one each), and no more than this waits for the socket.
 */
const READ_AHEAD = 64;
/**
 * Results executed ahead on all subscriptions together: with many subscribers each reads fewer
 * ahead (never under 2), so what waits for the sockets stays bounded however many subscribe.
 */
const READ_AHEAD_IN_ALL = 2_048;

export interface SubscriptionServerOptions {
  httpServer: Server;
  path: string;
  schema: GraphQLSchema;
  host: ApiHost;
  authenticator: Authenticator;
  /** Authenticates a credential and charges a refusal to the client's rate budget. */
  identify(credential: unknown, request: IncomingMessage): Promise<Principal | null>;
  /** The client address a request comes from, as budgets group it. */
  addressOf(request: IncomingMessage): string;
  /** What each operation (each event, for a subscription) may resolve, and its wall time. */
  limits: ResponseLimits;
  takeRate(key: string): Promise<void>;
  /** Refuses a subscription that costs too much and charges its cost to the caller (as over HTTP). */
  admit(caller: string, document: DocumentNode, request: { variables?: Record<string, unknown> | null; operationName?: string | null }): Promise<void>;
  validationRules: readonly ValidationRule[];
  formatError: ReturnType<typeof errorFormatter>;
  metrics: Metrics;
  log: Logger;
  /** Browser origins allowed besides the server's own. */
  allowedOrigins: readonly string[];
  settings: SubscriptionSettings;
}

interface Connection {
  request: IncomingMessage;
  /** The client address, as budgets group it. */
  address: string;
  /** The credential each open subscription was accepted with, by subscription id. */
  credentials: Map<string, { credential: unknown; principal: Principal }>;
  /** Whether it has shown a valid credential (in connection_init or with a subscription). */
  authenticated: boolean;
  /** The check of the credential its connection_init showed, while it runs: the wait for a credential ends with its verdict. */
  credentialCheck: Promise<unknown> | null;
  /** When its socket last took a message, or had nothing waiting. */
  drainedAt: number;
  timers: NodeJS.Timeout[];
}

/** Browsers send Origin: a page on another site may not open the WebSocket (it would carry the user's access). */
function originAllowed(origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (!origin) return true; // not a browser: it must still present a key to subscribe
  if (allowed.includes(origin)) return true;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** A credential for a subscription: connection parameters (graphql-ws clients) or the explorer's headers. */
function subscriptionCredential(connectionParams: Record<string, unknown> | undefined, extensions?: Record<string, unknown> | null): unknown {
  const headers = (extensions?.headers ?? {}) as Record<string, unknown>;
  return connectionParams?.Authorization ?? connectionParams?.authorization ?? headers.Authorization ?? headers.authorization;
}

/** A close reason fits in 123 bytes (RFC 6455). */
function closeReason(text: string): string {
  const bytes = Buffer.from(text);
  return bytes.length <= 123
    ? text
    : bytes
        .subarray(0, 120)
        .toString()
        .replace(/\uFFFD$/, '') + '...';
}

/**
 * Pulls up to `depthNow()` results ahead of the consumer, in order, so their executions overlap. It
 * tops up half the depth at once rather than one per result taken, so the executions it starts
 * together share their lookups. Each is executed in the subscription's request scope.
 */
function readAhead<T>(source: AsyncGenerator<T>, depthNow: () => number, scope: RequestScope): AsyncGenerator<T> {
  const pending: Promise<IteratorResult<T>>[] = [];
  let finished = false;
  const fill = (): void => {
    const depth = depthNow();
    if (pending.length > depth / 2) return;
    while (!finished && pending.length < depth) {
      // graphql-ws pulls from outside the subscription's scope: each event is executed inside it.
      const next = inRequestScope(scope, () => source.next());
      next.then(
        (result) => (finished ||= Boolean(result.done)),
        () => (finished = true),
      );
      pending.push(next);
    }
  };
  const iterator: AsyncGenerator<T> = {
    next: async () => {
      fill();
      return (await pending.shift()) ?? { value: undefined, done: true };
    },
    return: async (value) => {
      finished = true;
      pending.length = 0;
      return source.return(value as never);
    },
    throw: async (error) => {
      finished = true;
      pending.length = 0;
      return source.throw(error);
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

export function startSubscriptionServer(options: SubscriptionServerOptions): { dispose(): Promise<void> } {
  const { settings, metrics } = options;
  const connections = new Map<WebSocket, Connection>();
  /** Open connections by client address, and those of them without a credential yet. */
  const perAddress = new Map<string, number>();
  const unauthenticatedPerAddress = new Map<string, number>();
  let unauthenticatedCount = 0;
  const maxUnauthenticated = Math.max(1, Math.floor(settings.maxConnections * UNAUTHENTICATED_SHARE));
  /** Open operations by caller, on every connection. */
  const operationsPerCaller = new Map<string, number>();
  const openOperations = (): number => {
    let open = 0;
    for (const count of operationsPerCaller.values()) open += count;
    return open;
  };
  const count = (map: Map<string, number>, key: string, by: number): void => {
    const next = (map.get(key) ?? 0) + by;
    if (next > 0) map.set(key, next);
    else map.delete(key);
  };

  const drop = (socket: WebSocket, code: number, reason: string): void => {
    if (socket.readyState === socket.OPEN) socket.close(code, closeReason(reason));
  };

  // graphql-ws does not format errors: the same masking and codes as over HTTP, and the same log.
  const formatErrors = (errors: readonly GraphQLError[], subscription: { id: string; operationName?: string | null }) => {
    logClientErrors(options.log, options.formatError, 'websocket', errors, { requestId: subscription.id, operationName: subscription.operationName });
    return errors.map((error) => options.formatError(asReported(error, 'websocket'), error));
  };

  /** A connection that showed a valid credential, or closed, no longer holds a place of those waiting for one. */
  const stopWaitingForCredential = (connection: Connection): void => {
    if (connection.authenticated) return;
    connection.authenticated = true;
    unauthenticatedCount -= 1;
    count(unauthenticatedPerAddress, connection.address, -1);
  };

  /** Keeps an operation's credential to check again, and ends the connection when a token runs out. */
  const holdCredential = (socket: WebSocket, connection: Connection, id: string, credential: unknown, principal: Principal): void => {
    connection.credentials.set(id, { credential, principal });
    stopWaitingForCredential(connection);
    if (principal.expiresAt) {
      const timer = setTimeout(
        () => drop(socket, UNAUTHORIZED_CLOSE_CODE, 'Unauthorized: token expired'),
        Math.min(2 ** 31 - 1, Math.max(0, principal.expiresAt.getTime() - Date.now())),
      );
      connection.timers.push(timer.unref());
    }
  };

  const wsServer = new WebSocketServer({
    server: options.httpServer,
    path: options.path,
    maxPayload: QUERY_LIMITS.maxBodyBytes,
    // Refused before the upgrade, so a refused client holds no socket. A page of another site is
    // forbidden, not unauthenticated: its credentials are not the problem (403, not ws's default 401).
    verifyClient: (
      { origin, req }: { origin: string; req: IncomingMessage },
      done: (allowed: boolean, status?: number, message?: string, headers?: Record<string, string>) => void,
    ) => {
      if (!originAllowed(origin, req.headers.host, options.allowedOrigins)) return done(false, 403, 'Forbidden: this origin may not open the WebSocket');
      const retry = { 'retry-after': String(Math.ceil(settings.initTimeoutMs / 1000)) };
      const address = options.addressOf(req);
      if (connections.size >= settings.maxConnections)
        return done(false, 503, `Service Unavailable: the server has its maximum of ${settings.maxConnections} WebSocket connections open`, retry);
      if ((perAddress.get(address) ?? 0) >= settings.maxConnectionsPerAddress) {
        return done(false, 429, `Too Many Requests: at most ${settings.maxConnectionsPerAddress} WebSocket connections per client address`, retry);
      }
      // A client that shows its credential with the upgrade is not kept waiting by sockets that never show one.
      void options
        .identify(req.headers.authorization, req)
        .then(
          (principal) => principal !== null,
          () => false,
        )
        .then((authenticated) => {
          // The checks above are made again: other upgrades may have been admitted while the credential was checked.
          if (connections.size >= settings.maxConnections)
            return done(false, 503, `Service Unavailable: the server has its maximum of ${settings.maxConnections} WebSocket connections open`, retry);
          if (!authenticated && (unauthenticatedPerAddress.get(address) ?? 0) >= UNAUTHENTICATED_PER_ADDRESS) {
            return done(
              false,
              429,
              `Too Many Requests: ${UNAUTHENTICATED_PER_ADDRESS} WebSocket connections from this client address are waiting for a credential`,
              retry,
            );
          }
          if (!authenticated && unauthenticatedCount >= maxUnauthenticated) {
            return done(
              false,
              503,
              `Service Unavailable: ${maxUnauthenticated} WebSocket connections are waiting for a credential; send Authorization with the upgrade, or retry`,
              retry,
            );
          }
          (req as IncomingMessage & { chronoqlAuthenticated?: boolean }).chronoqlAuthenticated = authenticated;
          if (!authenticated) {
            unauthenticatedCount += 1;
            count(unauthenticatedPerAddress, address, 1);
          }
          count(perAddress, address, 1);
          done(true);
        });
    },
  });

  wsServer.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    const address = options.addressOf(request);
    const authenticated = (request as IncomingMessage & { chronoqlAuthenticated?: boolean }).chronoqlAuthenticated === true;
    const connection: Connection = { request, address, credentials: new Map(), authenticated, credentialCheck: null, drainedAt: Date.now(), timers: [] };
    connections.set(socket, connection);
    // Without a credential in connection_init (the explorer sends it with each subscription), it must subscribe with one soon.
    const noCredential = (): void => {
      if (!connection.authenticated) drop(socket, UNAUTHORIZED_CLOSE_CODE, 'Unauthorized: no credential; send Authorization: "Bearer …" in connection_init');
    };
    // A credential still being checked (slowly, while Neo4j is down) decides: "try again later" is not "no credential".
    const unauthenticatedTimer = setTimeout(
      () => (connection.credentialCheck ? void connection.credentialCheck.then(noCredential, noCredential) : noCredential()),
      settings.initTimeoutMs,
    );
    connection.timers.push(unauthenticatedTimer.unref());
    socket.once('close', () => {
      for (const timer of connection.timers) clearTimeout(timer);
      stopWaitingForCredential(connection);
      connections.delete(socket);
      count(perAddress, address, -1);
    });
  });

  // A revoked key or an expired token ends the connection it was accepted on, with the reason.
  const recheck = setInterval(() => {
    const verdicts = new Map<unknown, Promise<boolean>>();
    for (const [socket, connection] of connections) {
      for (const { credential, principal } of connection.credentials.values()) {
        if (!verdicts.has(credential))
          verdicts.set(
            credential,
            options.authenticator.authenticate(credential).then(
              () => true,
              (error: unknown) => (error as GraphQLError).extensions?.code !== 'UNAUTHENTICATED',
            ),
          );
        void verdicts.get(credential)!.then((valid) => {
          if (valid) return;
          const expired = principal.expiresAt !== undefined && principal.expiresAt.getTime() <= Date.now();
          drop(socket, UNAUTHORIZED_CLOSE_CODE, expired ? 'Unauthorized: token expired' : 'Unauthorized: credential revoked');
        });
      }
    }
  }, settings.credentialRecheckMs).unref();

  // A subscriber is fed as fast as its socket drains; one whose socket stopped draining is cut off, so it holds nothing for long.
  const watchdog = setInterval(
    () => {
      const now = Date.now();
      for (const [socket, connection] of connections) {
        if (socket.bufferedAmount === 0 || connection.credentials.size === 0) connection.drainedAt = now;
        else if (now - connection.drainedAt > settings.slowSubscriberMs) {
          metrics.slowSubscribers.inc();
          connection.drainedAt = now;
          drop(
            socket,
            SLOW_SUBSCRIBER_CLOSE_CODE,
            `too slow: nothing read for ${Math.round(settings.slowSubscriberMs / 1000)} s; resubscribe with afterSeq: the last seq received`,
          );
        }
      }
    },
    Math.min(1_000, settings.slowSubscriberMs / 4),
  ).unref();

  /** An operation's request scope: its Cypher and CPU work are its caller's and stop at its deadline. */
  const scopeOf = (args: ExecutionArgs): RequestScope => (args.contextValue as RequestContext).budget!.scope;

  const cleanup = useServer<Record<string, unknown>, RequestContext>(
    {
      schema: options.schema,
      connectionInitWaitTimeout: settings.initTimeoutMs,
      onConnect: async (context) => {
        const credential = subscriptionCredential(context.connectionParams);
        if (credential === undefined) return true;
        const connection = connections.get(context.extra.socket);
        const check = options.identify(credential, context.extra.request);
        if (connection) connection.credentialCheck = check;
        try {
          if (!(await check)) return true;
          if (connection) stopWaitingForCredential(connection);
          return true;
        } catch (error) {
          const { message, extensions } = beforeOperationError(error);
          if (extensions?.code === 'RATE_LIMITED') drop(context.extra.socket, RATE_LIMITED_CLOSE_CODE, `Too many requests: ${message}`);
          else if (typeof extensions?.retryAfterSeconds === 'number')
            drop(context.extra.socket, TRY_AGAIN_LATER_CLOSE_CODE, `Try again in ${extensions.retryAfterSeconds} s: ${message}`);
          else drop(context.extra.socket, UNAUTHORIZED_CLOSE_CODE, `Unauthorized: ${message}`);
          return false;
        } finally {
          if (connection) connection.credentialCheck = null;
        }
      },
      // Authentication, rate and query limits, all before anything runs. graphql-ws skips its own
      // parse and validate when onSubscribe is given, so they are done here too.
      onSubscribe: async (context, id, payload) => {
        const socket = context.extra.socket;
        const connection = connections.get(socket);
        const credential = subscriptionCredential(context.connectionParams, payload.extensions);
        let principal: Principal | null;
        let document: DocumentNode;
        try {
          principal = await options.identify(credential, context.extra.request);
          if (!principal) throw unauthenticated('subscriptions need an API key or token (connection parameter Authorization: "Bearer …")');
          await options.takeRate(`${principal.via}:${principal.subject}`);
          document = parse(payload.query, { maxTokens: QUERY_LIMITS.maxTokens });
        } catch (error) {
          return [beforeOperationError(error)];
        }
        const problems = validateWithLimits([...options.validationRules])(options.schema, document);
        if (problems.length > 0) return problems;
        const caller = `${principal.via}:${principal.subject}`;
        try {
          await options.admit(caller, document, { variables: payload.variables, operationName: payload.operationName });
        } catch (error) {
          return [error as GraphQLError];
        }
        // Counted and taken with no await between, so operations subscribed at once cannot all pass.
        if ((connection?.credentials.size ?? 0) >= settings.maxOperationsPerConnection) {
          return [tooManyOperations(`at most ${settings.maxOperationsPerConnection} operations may be open at once on one connection`)];
        }
        if ((operationsPerCaller.get(caller) ?? 0) >= settings.maxOperationsPerCaller) {
          return [tooManyOperations(`at most ${settings.maxOperationsPerCaller} operations may be open at once for one caller`)];
        }
        if (connection) holdCredential(socket, connection, id, credential, principal);
        count(operationsPerCaller, caller, 1);
        metrics.subscriptions.inc();
        const scope: RequestScope = { caller, deadline: Date.now() + options.limits.requestBudgetMs };
        return {
          schema: options.schema,
          document,
          variableValues: payload.variables,
          operationName: payload.operationName,
          contextValue: options.host.requestContext({
            cache: false,
            principal,
            requestId: id,
            caller,
            budget: new ResponseBudget(options.limits, scope),
            log: options.log,
          }),
        };
      },
      execute: (args: ExecutionArgs) => inRequestScope(scopeOf(args), () => execute(args)),
      subscribe: async (args: ExecutionArgs) => {
        // A subscription lives for hours: its stream is its caller's but has no deadline; each
        // event's fields keep the wall time of one operation (the response budget restarts it).
        const scope: RequestScope = { caller: scopeOf(args).caller, deadline: Number.POSITIVE_INFINITY };
        const result = await inRequestScope(scope, () => subscribe(args));
        const depth = (): number => Math.max(2, Math.min(READ_AHEAD, Math.floor(READ_AHEAD_IN_ALL / Math.max(1, openOperations()))));
        return Symbol.asyncIterator in result ? readAhead(result as AsyncGenerator<ExecutionResult>, depth, scope) : result;
      },
      onComplete: (context, id) => {
        const held = connections.get(context.extra.socket)?.credentials;
        const principal = held?.get(id)?.principal;
        held?.delete(id);
        if (principal) count(operationsPerCaller, `${principal.via}:${principal.subject}`, -1);
        metrics.subscriptions.dec();
      },
      onError: (_context, id, payload, errors) => formatErrors(errors, { id, operationName: payload.operationName }),
      onNext: (context, id, payload, args, result) => {
        // Called once the previous message was taken by the socket.
        const connection = connections.get(context.extra.socket);
        if (connection) connection.drainedAt = Date.now();
        // An operation (or event) cut off by its budget is told with its one error and no data, as over HTTP.
        const cut = (args.contextValue as RequestContext).budget?.cutOff;
        if (cut) return { data: null, errors: formatErrors([cut], { id, operationName: payload.operationName }) };
        return result.errors ? { ...result, errors: formatErrors(result.errors, { id, operationName: payload.operationName }) } : undefined;
      },
    },
    wsServer,
    settings.keepAliveMs,
  );

  return {
    dispose: async () => {
      clearInterval(recheck);
      clearInterval(watchdog);
      await cleanup.dispose();
    },
  };
}

function tooManyOperations(message: string): GraphQLError {
  return new GraphQLError(`${message}; complete one first`, { extensions: { code: 'TOO_MANY_OPERATIONS' } });
}
