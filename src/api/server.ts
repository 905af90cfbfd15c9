import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { ApiHost, RequestContext } from './context.js';
import { chronoqlSchema } from './schema.js';
import { GraphQLError, NoSchemaIntrospectionCustomRule, parse, type DocumentNode } from 'graphql';
import { pinoHttp } from 'pino-http';
import { Authenticator, unauthenticated, type AccessSettings, type Principal } from './auth.js';
import { asReported, errorFormatter, logMaskedErrors, sendError } from './errorReporting.js';
import { QUERY_LIMITS, RequestRateLimiter, queryArmor, validateWithLimits } from './limits.js';
import { explorerPage } from './explorer.js';
import type { Logger } from '../platform/logger.js';
import { Metrics, retrievalProblem } from './metrics.js';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const GRAPHQL_PATH = '/graphql';

/** What the HTTP and WebSocket server needs to know (app/config.ts reads it from the environment). */
export interface ServerSettings {
  port: number;
  host: string;
  /** `production` turns off introspection and the explorer. */
  mode: 'development' | 'production';
  access: AccessSettings;
  /** GraphQL operations per minute per API key, token subject or (anonymous) client address. */
  rateLimitPerMinute: number;
  /** Browser origins allowed to open the WebSocket; empty: only the server's own. */
  allowedOrigins: string[];
  /** The evaluation report shown at /reports (`chronoql eval --report` publishes there). */
  reportsDir: string;
}

export type ServerOptions = ServerSettings & { log: Logger };

/** How long a client may take to send its headers, and its whole request. */
export const HTTP_LIMITS = { headersMs: 10_000, requestMs: 30_000 } as const;

/** WebSocket close code (application range) for a subscriber cut off for reading too slowly. */
export const SLOW_SUBSCRIBER_CLOSE_CODE = 4008;

/** A caller-supplied request id is kept when it is short and plain, so it can be logged as it is. */
const REQUEST_ID = /^[\w.:-]{1,64}$/;

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

function addressOf(request: IncomingMessage): string {
  return `address:${request.socket.remoteAddress}`;
}

/** A credential for a subscription: connection parameters (graphql-ws clients) or the explorer's headers. */
function subscriptionCredential(connectionParams: Record<string, unknown> | undefined, extensions: Record<string, unknown> | undefined | null): unknown {
  const headers = (extensions?.headers ?? {}) as Record<string, unknown>;
  return connectionParams?.Authorization ?? connectionParams?.authorization ?? headers.Authorization ?? headers.authorization;
}

/**
 * Serves GraphQL over HTTP and graphql-ws subscriptions on the same port and path, the
 * offline explorer, /health and /metrics.
 */
export async function startServer(runtime: ApiHost, options: ServerOptions): Promise<RunningServer> {
  const schema = await chronoqlSchema();
  const metrics = new Metrics({
    retrieval: () => runtime.services.retrieval.status(),
    neo4jRoundTrips: () => runtime.services.db.queryCount,
    ingest: () => runtime.services.ingest.progress,
  });
  const authenticator = new Authenticator(runtime.services.db, options.access);
  const rateLimiter = new RequestRateLimiter(options.rateLimitPerMinute);
  // A refused credential spends the client address's budget, so guessing keys is rate limited too.
  const identify = (credential: unknown, address: string): Promise<Principal | null> =>
    authenticator.authenticate(credential).catch(async (refusal: unknown) => {
      await rateLimiter.take(address);
      throw refusal;
    });
  const app = express();
  app.disable('x-powered-by');
  // A client that sends its request slowly (or never finishes it) is cut off, so idle sockets cannot pile up.
  const httpServer: Server = createServer({ requestTimeout: HTTP_LIMITS.requestMs, headersTimeout: HTTP_LIMITS.headersMs, connectionsCheckingInterval: 1_000 }, app);

  // graphql-ws does not format errors: the same masking and codes as over HTTP, and the same log.
  const formatError = errorFormatter(options.mode);
  const formatSubscriptionErrors = (errors: readonly GraphQLError[], subscription: { id: string; operationName?: string | null }) => {
    logMaskedErrors(options.log, formatError, 'websocket', errors, { requestId: subscription.id, operationName: subscription.operationName });
    return errors.map((error) => formatError(asReported(error, 'websocket'), error));
  };
  const armor = queryArmor();
  const validationRules = [...armor.validationRules, ...(options.mode === 'production' ? [NoSchemaIntrospectionCustomRule] : [])];
  const wsServer = new WebSocketServer({
    server: httpServer,
    path: GRAPHQL_PATH,
    maxPayload: QUERY_LIMITS.maxBodyBytes,
    // A page of another site is forbidden, not unauthenticated: its credentials are not the problem (403, not ws's default 401).
    verifyClient: ({ origin, req }: { origin: string; req: IncomingMessage }, done: (allowed: boolean, status?: number, message?: string) => void) =>
      originAllowed(origin, req.headers.host, options.allowedOrigins) ? done(true) : done(false, 403, 'Forbidden: this origin may not open the WebSocket'),
  });
  const wsCleanup = useServer<Record<string, unknown>, RequestContext>(
    {
      schema,
      // Authentication, rate and query limits, all before anything runs. graphql-ws skips its own
      // parse and validate when onSubscribe is given, so they are done here too.
      onSubscribe: async (context, id, payload) => {
        let principal: Principal | null;
        let document: DocumentNode;
        try {
          principal = await identify(subscriptionCredential(context.connectionParams, payload.extensions), addressOf(context.extra.request));
          if (!principal) throw unauthenticated('subscriptions need an API key or token (connection parameter Authorization: "Bearer …")');
          await rateLimiter.take(`${principal.via}:${principal.subject}`);
          document = parse(payload.query, { maxTokens: QUERY_LIMITS.maxTokens });
        } catch (error) {
          return [error as GraphQLError];
        }
        const problems = validateWithLimits(validationRules)(schema, document);
        if (problems.length > 0) return problems;
        metrics.subscriptions.inc();
        return {
          schema,
          document,
          variableValues: payload.variables,
          operationName: payload.operationName,
          contextValue: runtime.requestContext({ cache: false, principal, requestId: id }),
        };
      },
      onComplete: () => {
        metrics.subscriptions.dec();
      },
      // A subscriber cut off for reading too slowly also loses its connection, with the reason:
      // the error message alone could sit unread in the buffers it stopped draining.
      onError: (context, id, payload, errors) => {
        const tooSlow = errors.find((error) => error.extensions?.code === 'SUBSCRIBER_TOO_SLOW');
        if (tooSlow) {
          metrics.slowSubscribers.inc();
          const reason = `too slow; resubscribe with afterSeq: ${String(tooSlow.extensions.resumeAfterSeq)}`;
          setImmediate(() => context.extra.socket.close(SLOW_SUBSCRIBER_CLOSE_CODE, reason)); // after the error is queued
        }
        return formatSubscriptionErrors(errors, { id, operationName: payload.operationName });
      },
      onNext: (_context, id, payload, _args, result) => (result.errors ? { ...result, errors: formatSubscriptionErrors(result.errors, { id, operationName: payload.operationName }) } : undefined),
    },
    wsServer,
  );

  const apollo = new ApolloServer<RequestContext>({
    schema,
    formatError,
    introspection: options.mode !== 'production',
    validationRules,
    parseOptions: { maxTokens: QUERY_LIMITS.maxTokens },
    allowBatchedHttpRequests: armor.allowBatchedHttpRequests,
    includeStacktraceInErrorResponses: armor.includeStacktraceInErrorResponses,
    plugins: [
      // graphql-armor is typed against @apollo/server's CommonJS build; the plugins are the same objects.
      ...(armor.plugins as unknown as ApolloServerPlugin<RequestContext>[]),
      ApolloServerPluginDrainHttpServer({ httpServer }),
      ApolloServerPluginLandingPageDisabled(),
      metrics.apolloPlugin(),
      {
        requestDidStart: async () => ({
          didEncounterErrors: async ({ errors, operationName, contextValue }) => logMaskedErrors(options.log, formatError, 'http', errors, { requestId: contextValue.requestId, operationName }),
        }),
      },
      { serverWillStart: async () => ({ drainServer: async () => wsCleanup.dispose() }) },
    ],
  });
  await apollo.start();

  // 503 when Neo4j cannot be reached; "degraded" (still 200: reads and lexical search work) when
  // the vector indexes or the embedding worker fail, with the reason.
  app.get('/health', async (_request, response) => {
    const retrieval = runtime.services.retrieval.status();
    const problem = retrievalProblem(retrieval);
    // Low space refuses ingests (STORAGE_FULL) while reads go on: degraded, with the reason.
    const disk = await runtime.services.disk.status().catch((error: Error) => ({ problem: `cannot read the free space: ${error.message}` }));
    try {
      await runtime.services.db.verify();
      response.json({ status: problem || disk.problem ? 'degraded' : 'ok', neo4j: 'reachable', retrieval: { ...retrieval, problem }, disk });
    } catch (error) {
      const detail = options.mode === 'development' ? { error: (error as Error).message } : {};
      response.status(503).json({ status: 'unavailable', neo4j: 'unreachable', ...detail, retrieval: { ...retrieval, problem } });
    }
  });
  // Ready to take traffic: Neo4j answers and the server is not shutting down.
  let draining = false;
  app.get('/ready', async (_request, response) => {
    if (draining) return void response.status(503).json({ ready: false, reason: 'shutting down' });
    try {
      await runtime.services.db.verify();
      response.json({ ready: true });
    } catch {
      response.status(503).json({ ready: false, reason: 'Neo4j is unreachable' });
    }
  });
  app.get('/metrics', async (_request, response) => {
    response.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.use(
    pinoHttp({
      logger: options.log,
      genReqId: (request, response) => {
        const given = request.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        response.setHeader('x-request-id', id);
        return id;
      },
      // Every request is logged at debug; failures at warn and error, with their request id.
      customLogLevel: (_request, response, error) => (error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'debug'),
    }),
  );
  app.get(GRAPHQL_PATH, (request, response, next) => {
    // A browser opening /graphql, also a shared link with ?query=… (the explorer reads it), gets the explorer; API clients ask for JSON.
    if (options.mode !== 'production' && request.accepts(['application/json', 'text/html']) === 'text/html') {
      response.type('html').send(explorerPage());
    } else next();
  });
  app.get('/', (_request, response) => response.redirect(GRAPHQL_PATH));
  app.use('/reports', express.static(options.reportsDir, { index: 'index.html', redirect: true }), (_request, response) => {
    response.status(404).type('text').send('No evaluation report yet: run `chronoql eval --report DIR` to make one.\n');
  });
  // Who is calling, and whether they may call again this minute, before the body is even read.
  app.use(GRAPHQL_PATH, async (request, response, next) => {
    const address = addressOf(request);
    try {
      const principal = await identify(request.headers.authorization, address);
      if (!principal && options.access.readAccess === 'key') throw unauthenticated('this server needs an API key or token for every request (Authorization: Bearer …)');
      await rateLimiter.take(principal ? `${principal.via}:${principal.subject}` : address);
      response.locals.principal = principal;
      next();
    } catch (error) {
      const { extensions, message } = error as GraphQLError;
      const retryAfter = extensions?.retryAfterSeconds;
      if (typeof retryAfter === 'number') response.setHeader('retry-after', String(retryAfter));
      const status = (extensions?.http as { status?: number } | undefined)?.status;
      if (status) sendError(response, status, String(extensions.code), message);
      else next(error);
    }
  });
  app.use(
    GRAPHQL_PATH,
    express.json({ limit: QUERY_LIMITS.maxBodyBytes }),
    expressMiddleware(apollo, {
      context: async ({ req, res }) => runtime.requestContext({ principal: (res.locals.principal as Principal | null | undefined) ?? null, requestId: String(req.id) }),
    }),
  );
  // An unknown route answers in JSON like everything else, not with Express's HTML page.
  app.use((request: express.Request, response: express.Response) => {
    sendError(response, 404, 'NOT_FOUND', `no route ${request.method} ${request.path}: the API is at ${GRAPHQL_PATH}`);
  });
  // Body-parser errors (too large, not JSON) answer as GraphQL errors in JSON, not as an HTML page with a stack trace.
  app.use((error: { status?: number; type?: string }, _request: express.Request, response: express.Response, next: express.NextFunction) => {
    if (!error || typeof error.status !== 'number') return next(error);
    const tooLarge = error.type === 'entity.too.large';
    sendError(
      response,
      error.status,
      tooLarge ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST',
      tooLarge ? `request body over ${QUERY_LIMITS.maxBodyBytes} bytes` : 'request body is not valid JSON',
    );
  });
  // Anything else: JSON, with no stack trace.
  app.use((error: unknown, request: express.Request, response: express.Response, _next: express.NextFunction) => {
    request.log.error({ err: error }, 'request failed');
    sendError(response, 500, 'INTERNAL_SERVER_ERROR', 'internal server error; the server log has the details');
  });

  await listen(httpServer, options.port, options.host);
  const { port } = httpServer.address() as AddressInfo;
  const url = `http://${options.host === '0.0.0.0' ? 'localhost' : options.host}:${port}${GRAPHQL_PATH}`;
  return {
    url,
    port,
    close: async () => {
      draining = true;
      metrics.close();
      await apollo.stop();
    },
  };
}

/**
 * Answers on the port while ChronoQL waits for Neo4j at start, so probes see why it is not up:
 * /health and /ready say "starting" (503) with the last connection problem, and every other
 * request gets SERVICE_UNAVAILABLE. Closed once the real server can take the port.
 */
export async function startBootServer(options: Pick<ServerOptions, 'port' | 'host' | 'mode'>): Promise<{ setProblem(problem: string): void; close(): Promise<void> }> {
  let problem: string | null = null;
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const body =
      path === '/health' || path === '/ready'
        ? { status: 'starting', neo4j: problem ? 'unreachable' : 'connecting', ...(problem && options.mode === 'development' ? { error: problem } : {}) }
        : { errors: [{ message: 'ChronoQL is starting: waiting for Neo4j', extensions: { code: 'SERVICE_UNAVAILABLE' } }] };
    response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' });
    response.end(JSON.stringify(body));
  });
  await listen(server, options.port, options.host);
  return {
    setProblem: (text) => (problem = text),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}
