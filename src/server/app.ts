import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express from 'express';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { RequestContext } from '../schema/context.js';
import { chronoqlSchema } from '../schema/index.js';
import { formatError } from './errors.js';
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

  const wsServer = new WebSocketServer({ server: httpServer, path: GRAPHQL_PATH });
  const wsCleanup = useServer<Record<string, unknown>, RequestContext>(
    {
      schema,
      context: () => runtime.requestContext({ cache: false }),
      onSubscribe: () => {
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
    plugins: [
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
    express.json({ limit: '50mb' }),
    expressMiddleware(apollo, { context: async () => runtime.requestContext() }),
  );

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
