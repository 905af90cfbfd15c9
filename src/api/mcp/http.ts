/**
 * MCP's Streamable HTTP transport at /mcp, beside /graphql. Stateless: each POST brings its own
 * credential and is answered on its own, so any server of the store can take it and a client
 * holds no session to lose. Browsers are kept out as the MCP specification asks against DNS
 * rebinding: a request with an Origin must come from one listed in CHRONOQL_ALLOWED_ORIGINS, and
 * a server listening on loopback answers only to a loopback Host.
 */
import type { IncomingMessage } from 'node:http';
import { localhostHostValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import { quoteInput } from '../../domain/errors.js';
import { connectMcpServer, createMcpServer, prepareCatalog } from './mcpServer.js';
import type { McpClient, McpEndpoint } from './operations.js';

export const MCP_PATH = '/mcp';

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '::1'];

export interface McpHttpOptions {
  /** The interface the server listens on. */
  host: string;
  /** Browser origins allowed to call /mcp. */
  allowedOrigins: readonly string[];
  /** The client network an anonymous request counts as. */
  addressOf(request: IncomingMessage): string;
}

/** A JSON-RPC error answered before any MCP request is read. */
function refuse(response: express.Response, status: number, message: string): void {
  response.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
}

export function mcpRoutes(endpoint: McpEndpoint, options: McpHttpOptions): express.Router {
  const catalog = prepareCatalog(endpoint.gate.schema);
  const ready = Promise.resolve(endpoint);
  const router = express.Router();
  if (LOOPBACK_HOSTS.includes(options.host)) router.use(localhostHostValidation());
  router.use((request, response, next) => {
    const origin = request.headers.origin;
    if (origin === undefined || options.allowedOrigins.includes(origin)) return next();
    refuse(response, 403, `Forbidden: the origin ${quoteInput(origin)} may not call ${MCP_PATH}; list it in CHRONOQL_ALLOWED_ORIGINS`);
  });
  router.post('/', async (request, response) => {
    const client: McpClient = {
      credential: request.headers.authorization,
      address: options.addressOf(request),
      requestId: () => String(request.id),
      transport: 'mcp-http',
    };
    const server = createMcpServer(ready, catalog, client);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: endpoint.gate.limits.maxBodyBytes,
    });
    response.on('close', () => void server.close());
    await connectMcpServer(server, transport, endpoint.log, client);
    await transport.handleRequest(request, response);
  });
  router.all('/', (_request, response) => {
    response.setHeader('allow', 'POST');
    refuse(response, 405, `Method Not Allowed: this server keeps no MCP sessions; send each JSON-RPC message as a POST to ${MCP_PATH}`);
  });
  return router;
}
