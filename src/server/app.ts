import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { RequestContext } from '../schema/context.js';
import { chronoqlSchema } from '../schema/index.js';
import { parse, type DocumentNode, type GraphQLError } from 'graphql';
import { formatError } from './errors.js';
import { QUERY_LIMITS, queryArmor, validateWithLimits } from './limits.js';
import { explorerPage } from './explorer.js';
import type { Logger } from './logger.js';
import { Metrics, retrievalProblem } from './metrics.js';
import type { Runtime } from './runtime.js';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const GRAPHQL_PATH = '/graphql';

/**
 * Serves GraphQL over HTTP and graphql-ws subscriptions on the same port and path, the
 * offline explorer, /health and /metrics.
 */
export async function startServer(runtime: Runtime, options: { port: number; host: string; log: Logger }): Promise<RunningServer> {
  const schema = await chronoqlSchema();
  const metrics = new Metrics(() => runtime.services.retrieval.status());
  const app = express();
  const httpServer: Server = createServer(app);

  const armor = queryArmor();
  const wsServer = new WebSocketServer({ server: httpServer, path: GRAPHQL_PATH, maxPayload: QUERY_LIMITS.maxBodyBytes });
  const wsCleanup = useServer<Record<string, unknown>, RequestContext>(
    {
      schema,
      context: () => runtime.requestContext({ cache: false }),
      // graphql-ws skips its `validate` option when onSubscribe is given, so the limits are checked here.
      onSubscribe: (_context, _id, payload) => {
        let document: DocumentNode;
        try {
          document = parse(payload.query);
        } catch (error) {
          return [error as GraphQLError];
        }
        const problems = validateWithLimits(armor.validationRules)(schema, document);
        if (problems.length > 0) return problems;
        metrics.subscriptions.inc();
      },
      onComplete: () => {
        metrics.subscriptions.dec();
      },
    },
    wsServer,
  );

  const apollo = new ApolloServer<RequestContext>({
    schema,
    formatError,
    validationRules: armor.validationRules,
    allowBatchedHttpRequests: armor.allowBatchedHttpRequests,
    includeStacktraceInErrorResponses: armor.includeStacktraceInErrorResponses,
    plugins: [
      // graphql-armor is typed against @apollo/server's CommonJS build; the plugins are the same objects.
      ...(armor.plugins as unknown as ApolloServerPlugin<RequestContext>[]),
      ApolloServerPluginDrainHttpServer({ httpServer }),
      ApolloServerPluginLandingPageDisabled(),
      metrics.apolloPlugin(),
      { serverWillStart: async () => ({ drainServer: async () => wsCleanup.dispose() }) },
    ],
  });
  await apollo.start();

  // 503 when Neo4j cannot be reached; "degraded" (still 200: reads and lexical search work) when
  // the vector indexes or the embedding worker fail, with the reason.
  app.get('/health', async (_request, response) => {
    const retrieval = runtime.services.retrieval.status();
    const problem = retrievalProblem(retrieval);
    try {
      await runtime.services.db.verify();
      response.json({ status: problem ? 'degraded' : 'ok', neo4j: 'reachable', retrieval: { ...retrieval, problem } });
    } catch (error) {
      response.status(503).json({ status: 'unavailable', neo4j: 'unreachable', error: (error as Error).message, retrieval: { ...retrieval, problem } });
    }
  });
  app.get('/metrics', async (_request, response) => {
    response.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.get(GRAPHQL_PATH, (request, response, next) => {
    if (request.accepts(['application/json', 'text/html']) === 'text/html' && !request.query.query) {
      response.type('html').send(explorerPage());
    } else next();
  });
  app.get('/', (_request, response) => response.redirect(GRAPHQL_PATH));
  app.use(
    GRAPHQL_PATH,
    express.json({ limit: QUERY_LIMITS.maxBodyBytes }),
    expressMiddleware(apollo, { context: async () => runtime.requestContext() }),
  );
  // Body-parser errors (too large, not JSON) answer as GraphQL errors in JSON, not as an HTML page with a stack trace.
  app.use((error: { status?: number; type?: string }, _request: express.Request, response: express.Response, next: express.NextFunction) => {
    if (!error || typeof error.status !== 'number') return next(error);
    const tooLarge = error.type === 'entity.too.large';
    response.status(error.status).json({
      errors: [
        {
          message: tooLarge ? `request body over ${QUERY_LIMITS.maxBodyBytes} bytes` : 'request body is not valid JSON',
          extensions: { code: tooLarge ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST' },
        },
      ],
    });
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  const url = `http://${options.host === '0.0.0.0' ? 'localhost' : options.host}:${port}${GRAPHQL_PATH}`;
  return {
    url,
    port,
    close: async () => {
      await apollo.stop();
    },
  };
}
