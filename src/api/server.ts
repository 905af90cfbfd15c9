import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import type { ApiHost, RequestContext } from './context.js';
import { NoSchemaIntrospectionCustomRule } from 'graphql';
import { pinoHttp } from 'pino-http';
import { Role, unauthenticated, type Principal } from './auth.js';
import { beforeOperationError, errorFormatter, logClientErrors, retryAfterPlugin, sendError } from './errorReporting.js';
import { QUERY_LIMITS, queryArmor, type QueryLimits } from './limits.js';
import { cutOffResponsePlugin, ResponseBudget } from './responseBudget.js';
import { inRequestScope, type RequestScope } from '../platform/requestScope.js';
import { callerOf, openGate, type AccessAndBudgets } from './gate.js';
import { anonymousCaller } from './clientAddress.js';
import { explorerPage } from './explorer.js';
import type { Logger } from '../platform/logger.js';
import { Metrics, retrievalProblem } from './metrics.js';
import { startSubscriptionServer, type SubscriptionSettings } from './subscriptionServer.js';
import { MCP_PATH, mcpRoutes } from './mcp/http.js';

export interface RunningServer {
  url: string;
  /** The MCP endpoint (Streamable HTTP). */
  mcpUrl: string;
  port: number;
  close(): Promise<void>;
}

const GRAPHQL_PATH = '/graphql';

/** What the HTTP and WebSocket server needs to know (app/config.ts reads it from the environment). */
export interface ServerSettings extends AccessAndBudgets {
  port: number;
  host: string;
  /** `production` turns off introspection and the explorer. */
  mode: 'development' | 'production';
  /** Browser origins allowed to open the WebSocket (besides the server's own) and to call /mcp. */
  allowedOrigins: string[];
  /** The evaluation report shown at /reports (`chronoql eval --report` publishes there). */
  reportsDir: string;
  /** WebSocket connection caps and timeouts. */
  subscriptions: SubscriptionSettings;
}

/** `limits` overrides QUERY_LIMITS' cost and response bounds (tests and benchmarks use small ones). */
export type ServerOptions = ServerSettings & { log: Logger; limits?: Partial<QueryLimits> };

/** How long a client may take to send its headers, and its whole request. */
export const HTTP_LIMITS = { headersMs: 10_000, requestMs: 30_000 } as const;

/** A caller-supplied request id is kept when it is short and plain, so it can be logged as it is. */
const REQUEST_ID = /^[\w.:-]{1,64}$/;

/** An anonymous client is its network, not its exact address (clientAddress.ts). */
function addressOf(request: IncomingMessage): string {
  return anonymousCaller(request.socket.remoteAddress);
}

/**
 * Serves GraphQL over HTTP and graphql-ws subscriptions on the same port and path, the
 * offline explorer, /health and /metrics.
 */
export async function startServer(runtime: ApiHost, options: ServerOptions): Promise<RunningServer> {
  const gate = await openGate(runtime, options);
  const { schema, limits } = gate;
  const metrics = new Metrics({
    retrieval: () => runtime.services.retrieval.status(),
    neo4jRoundTrips: () => runtime.services.db.queryCount,
    ingest: () => runtime.services.ingest.progress,
  });
  const { identify } = gate;
  const app = express();
  app.disable('x-powered-by');
  // A client that sends its request slowly (or never finishes it) is cut off, so idle sockets cannot pile up.
  const httpServer: Server = createServer(
    { requestTimeout: HTTP_LIMITS.requestMs, headersTimeout: HTTP_LIMITS.headersMs, connectionsCheckingInterval: 1_000 },
    app,
  );

  const formatError = errorFormatter(options.mode);
  const armor = queryArmor();
  const validationRules = [...armor.validationRules, ...(options.mode === 'production' ? [NoSchemaIntrospectionCustomRule] : [])];
  const subscriptions = startSubscriptionServer({
    httpServer,
    path: GRAPHQL_PATH,
    schema,
    host: runtime,
    authenticator: gate.authenticator,
    identify: (credential, request) => identify(credential, addressOf(request)),
    addressOf,
    limits,
    takeRate: gate.take,
    admit: gate.admit,
    validationRules,
    formatError,
    metrics,
    log: options.log,
    allowedOrigins: options.allowedOrigins,
    settings: options.subscriptions,
  });

  const apollo = new ApolloServer<RequestContext>({
    schema,
    formatError,
    introspection: options.mode !== 'production',
    // `chronoql serve` stops in its own order on SIGINT/SIGTERM; Apollo's handlers would re-raise the signal once Apollo alone had stopped, killing the process mid-shutdown.
    stopOnTerminationSignals: false,
    validationRules,
    parseOptions: { maxTokens: QUERY_LIMITS.maxTokens },
    allowBatchedHttpRequests: armor.allowBatchedHttpRequests,
    includeStacktraceInErrorResponses: armor.includeStacktraceInErrorResponses,
    plugins: [
      // graphql-armor is typed against @apollo/server's CommonJS build; the plugins are the same objects.
      ...(armor.plugins as unknown as ApolloServerPlugin<RequestContext>[]),
      ApolloServerPluginDrainHttpServer({ httpServer }),
      ApolloServerPluginLandingPageDisabled(),
      // No field has a cache hint, and the plugin would hook every field of every response.
      ApolloServerPluginCacheControlDisabled(),
      metrics.apolloPlugin(),
      cutOffResponsePlugin(),
      retryAfterPlugin(),
      {
        requestDidStart: async () => ({
          // After validation, before anything runs: refuse what costs too much, and spend the caller's budget.
          didResolveOperation: ({ document, request, contextValue }) => gate.admit(contextValue.caller, document, request),
          // A cut-off operation is told (and logged) as its one error, however many fields failed with it.
          didEncounterErrors: async ({ errors, operationName, contextValue }) =>
            logClientErrors(options.log, formatError, 'http', contextValue.budget?.cutOff ? [contextValue.budget.cutOff] : errors, {
              requestId: contextValue.requestId,
              operationName,
            }),
        }),
      },
      { serverWillStart: async () => ({ drainServer: async () => subscriptions.dispose() }) },
    ],
  });
  await apollo.start();

  // In production, or when reads need a key, what the server runs and holds is for operators:
  // an anonymous probe learns only the status, and /metrics needs the admin role.
  const guarded = options.mode === 'production' || options.access.readAccess === 'key';
  const operatorOf = async (request: express.Request): Promise<boolean> => {
    const principal = await identify(request.headers.authorization, addressOf(request)).catch(() => null);
    return principal?.role === Role.ADMIN;
  };
  // 503 when Neo4j cannot be reached; "degraded" (still 200: reads and lexical search work) when
  // the vector indexes or the embedding worker fail, with the reason.
  app.get('/health', async (request, response) => {
    const retrieval = runtime.services.retrieval.status();
    const problem = retrievalProblem(retrieval);
    // Low space refuses ingests (STORAGE_FULL) while reads go on: degraded, with the reason.
    const disk = await runtime.services.disk.status().catch((error: Error) => ({ problem: `cannot read the free space: ${error.message}` }));
    const detailed = !guarded || (await operatorOf(request));
    const answer = (status: number, body: { status: string; neo4j: string; error?: string }) =>
      response.status(status).json(detailed ? { ...body, retrieval: { ...retrieval, problem }, disk } : { status: body.status });
    try {
      await runtime.services.db.verify();
      answer(200, { status: problem || disk.problem ? 'degraded' : 'ok', neo4j: 'reachable' });
    } catch (error) {
      answer(503, { status: 'unavailable', neo4j: 'unreachable', ...(options.mode === 'development' ? { error: (error as Error).message } : {}) });
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
  app.get('/metrics', async (request, response) => {
    if (guarded && !(await operatorOf(request))) {
      return void sendError(response, 401, 'UNAUTHENTICATED', 'metrics need an admin API key or token on this server (Authorization: Bearer …)');
    }
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
  app.use(
    MCP_PATH,
    mcpRoutes({ host: runtime, gate, log: options.log, mode: options.mode }, { host: options.host, allowedOrigins: options.allowedOrigins, addressOf }),
  );
  app.use('/reports', express.static(options.reportsDir, { index: 'index.html', redirect: true }), (_request, response) => {
    response.status(404).type('text').send('No evaluation report yet: run `chronoql eval --report DIR` to make one.\n');
  });
  // Who is calling, and whether they may call again this minute, before the body is even read.
  app.use(GRAPHQL_PATH, async (request, response, next) => {
    const address = addressOf(request);
    try {
      const principal = await identify(request.headers.authorization, address);
      if (!principal && options.access.readAccess === 'key')
        throw unauthenticated('this server needs an API key or token for every request (Authorization: Bearer …)');
      response.locals.principal = principal;
      response.locals.caller = callerOf(principal, address);
      await gate.take(response.locals.caller);
      next();
    } catch (error) {
      // Neo4j unreachable while a key is checked is SERVICE_UNAVAILABLE (503), not a refused credential.
      const { extensions, message } = beforeOperationError(error);
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
    // Everything the operation runs, Cypher included, is the caller's: it draws on the caller's shares and stops at its deadline.
    (_request, response, next) => {
      const scope: RequestScope = { caller: response.locals.caller as string, deadline: Date.now() + limits.requestBudgetMs };
      response.locals.scope = scope;
      inRequestScope(scope, next);
    },
    expressMiddleware(apollo, {
      context: async ({ req, res }) =>
        runtime.requestContext({
          principal: (res.locals.principal as Principal | null | undefined) ?? null,
          requestId: String(req.id),
          caller: res.locals.caller as string,
          budget: new ResponseBudget(limits, res.locals.scope as RequestScope),
          log: options.log,
        }),
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
  const origin = `http://${options.host === '0.0.0.0' ? 'localhost' : options.host}:${port}`;
  return {
    url: `${origin}${GRAPHQL_PATH}`,
    mcpUrl: `${origin}${MCP_PATH}`,
    port,
    close: async () => {
      draining = true;
      gate.close();
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
export async function startBootServer(
  options: Pick<ServerOptions, 'port' | 'host' | 'mode'>,
): Promise<{ setProblem(problem: string): void; close(): Promise<void> }> {
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
