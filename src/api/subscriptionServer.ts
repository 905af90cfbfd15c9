/**
 * graphql-ws subscriptions on the HTTP server's port and path: who may connect, how many, and
 * for how long. A connection must show a valid credential within a few seconds, keeps it valid
 * for as long as it subscribes, and must read what it is sent.
 */
import type { IncomingMessage, Server } from 'node:http';
import { GraphQLError, parse, subscribe, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema, type ValidationRule } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { unauthenticated, type Authenticator, type Principal } from './auth.js';
import type { ApiHost, RequestContext } from './context.js';
import { asReported, beforeOperationError, logClientErrors, type errorFormatter } from './errorReporting.js';
import { QUERY_LIMITS, validateWithLimits } from './limits.js';
import type { Metrics } from './metrics.js';
import type { Logger } from '../platform/logger.js';

export interface SubscriptionSettings {
  /** Open WebSocket connections in all; more are refused at the upgrade with 503. */
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
}

export const DEFAULT_SUBSCRIPTION_SETTINGS: SubscriptionSettings = {
  maxConnections: 1_000,
  maxConnectionsPerAddress: 50,
  initTimeoutMs: 3_000,
  keepAliveMs: 12_000,
  credentialRecheckMs: 5_000,
  // Below the keep-alive's 12–24 s, so a reader that stopped hears why before its pong is missed.
  slowSubscriberMs: 10_000,
};

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

export interface SubscriptionServerOptions {
  httpServer: Server;
  path: string;
  schema: GraphQLSchema;
  host: ApiHost;
  authenticator: Authenticator;
  /** Authenticates a credential and charges a refusal to the client's rate budget. */
  identify(credential: unknown, request: IncomingMessage): Promise<Principal | null>;
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
  /** The credential each open subscription was accepted with, by subscription id. */
  credentials: Map<string, { credential: unknown; principal: Principal }>;
  /** Whether it has shown a valid credential (in connection_init or with a subscription). */
  authenticated: boolean;
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
 * Pulls up to `depth` results ahead of the consumer, in order, so their executions overlap. It
 * tops up half the depth at once rather than one per result taken, so the executions it starts
 * together share their lookups.
 */
function readAhead<T>(source: AsyncGenerator<T>, depth: number): AsyncGenerator<T> {
  const pending: Promise<IteratorResult<T>>[] = [];
  let finished = false;
  const fill = (): void => {
    if (pending.length > depth / 2) return;
    while (!finished && pending.length < depth) {
      const next = source.next();
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
  const perAddress = new Map<string, number>();

  const drop = (socket: WebSocket, code: number, reason: string): void => {
    if (socket.readyState === socket.OPEN) socket.close(code, closeReason(reason));
  };

  // graphql-ws does not format errors: the same masking and codes as over HTTP, and the same log.
  const formatErrors = (errors: readonly GraphQLError[], subscription: { id: string; operationName?: string | null }) => {
    logClientErrors(options.log, options.formatError, 'websocket', errors, { requestId: subscription.id, operationName: subscription.operationName });
    return errors.map((error) => options.formatError(asReported(error, 'websocket'), error));
  };

  /** Keeps a subscription's credential to check again, and ends the connection when a token runs out. */
  const holdCredential = (socket: WebSocket, connection: Connection, id: string, credential: unknown, principal: Principal): void => {
    connection.credentials.set(id, { credential, principal });
    connection.authenticated = true;
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
      if (connections.size >= settings.maxConnections)
        return done(false, 503, `Service Unavailable: the server has its maximum of ${settings.maxConnections} WebSocket connections open`, retry);
      if ((perAddress.get(req.socket.remoteAddress ?? '') ?? 0) >= settings.maxConnectionsPerAddress) {
        return done(false, 429, `Too Many Requests: at most ${settings.maxConnectionsPerAddress} WebSocket connections per client address`, retry);
      }
      done(true);
    },
  });

  wsServer.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    const address = request.socket.remoteAddress ?? '';
    const connection: Connection = { request, credentials: new Map(), authenticated: false, drainedAt: Date.now(), timers: [] };
    connections.set(socket, connection);
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    // Without a credential in connection_init (the explorer sends it with each subscription), it must subscribe with one soon.
    const unauthenticatedTimer = setTimeout(() => {
      if (!connection.authenticated) drop(socket, UNAUTHORIZED_CLOSE_CODE, 'Unauthorized: no credential; send Authorization: "Bearer …" in connection_init');
    }, settings.initTimeoutMs);
    connection.timers.push(unauthenticatedTimer.unref());
    socket.once('close', () => {
      for (const timer of connection.timers) clearTimeout(timer);
      connections.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left > 0) perAddress.set(address, left);
      else perAddress.delete(address);
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

  const cleanup = useServer<Record<string, unknown>, RequestContext>(
    {
      schema: options.schema,
      connectionInitWaitTimeout: settings.initTimeoutMs,
      onConnect: async (context) => {
        const credential = subscriptionCredential(context.connectionParams);
        if (credential === undefined) return true;
        try {
          if (!(await options.identify(credential, context.extra.request))) return true;
          const connection = connections.get(context.extra.socket);
          if (connection) connection.authenticated = true;
          return true;
        } catch (error) {
          const { message, extensions } = beforeOperationError(error);
          if (extensions?.code === 'RATE_LIMITED') drop(context.extra.socket, RATE_LIMITED_CLOSE_CODE, `Too many requests: ${message}`);
          else if (typeof extensions?.retryAfterSeconds === 'number')
            drop(context.extra.socket, TRY_AGAIN_LATER_CLOSE_CODE, `Try again in ${extensions.retryAfterSeconds} s: ${message}`);
          else drop(context.extra.socket, UNAUTHORIZED_CLOSE_CODE, `Unauthorized: ${message}`);
          return false;
        }
      },
      // Authentication, rate and query limits, all before anything runs. graphql-ws skips its own
      // parse and validate when onSubscribe is given, so they are done here too.
      onSubscribe: async (context, id, payload) => {
        const socket = context.extra.socket;
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
        const connection = connections.get(socket);
        if (connection) holdCredential(socket, connection, id, credential, principal);
        metrics.subscriptions.inc();
        return {
          schema: options.schema,
          document,
          variableValues: payload.variables,
          operationName: payload.operationName,
          contextValue: options.host.requestContext({ cache: false, principal, requestId: id, caller, log: options.log }),
        };
      },
      subscribe: async (args: ExecutionArgs) => {
        const result = await subscribe(args);
        return Symbol.asyncIterator in result ? readAhead(result as AsyncGenerator<ExecutionResult>, READ_AHEAD) : result;
      },
      onComplete: (context, id) => {
        connections.get(context.extra.socket)?.credentials.delete(id);
        metrics.subscriptions.dec();
      },
      onError: (_context, id, payload, errors) => formatErrors(errors, { id, operationName: payload.operationName }),
      onNext: (context, id, payload, _args, result) => {
        // Called once the previous message was taken by the socket.
        const connection = connections.get(context.extra.socket);
        if (connection) connection.drainedAt = Date.now();
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
