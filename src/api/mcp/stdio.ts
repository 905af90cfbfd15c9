/**
 * MCP over stdio (`chronoql mcp`): the client starts the process and talks JSON-RPC on its stdin
 * and stdout (logs go to stderr). It answers the client's handshake and tool list at once, while
 * it still opens the store, so a client's start-up timeout does not race Neo4j and the models.
 * A stdio client sends no headers, so the process calls with the configured API key, checked
 * again at every request (a revoked key stops within a second); with none it is an anonymous
 * client of this machine's network, as a local HTTP client would be.
 */
import { randomUUID } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Logger } from '../../platform/logger.js';
import { anonymousCaller } from '../clientAddress.js';
import type { ApiHost } from '../context.js';
import { openGate, type AccessAndBudgets, type Gate } from '../gate.js';
import { chronoqlSchema } from '../schema.js';
import { connectMcpServer, createMcpServer, prepareCatalog } from './mcpServer.js';
import type { McpClient, McpEndpoint } from './operations.js';

export interface StdioSettings extends AccessAndBudgets {
  mode: McpEndpoint['mode'];
  /** The API key or token every request is made with. */
  apiKey: string | null;
  log: Logger;
}

/**
 * Serves one MCP client on stdin and stdout until it closes them, or SIGINT or SIGTERM, over the
 * store `openHost` opens; a store that cannot be opened ends it with that error.
 */
export async function serveMcpOverStdio(openHost: () => Promise<ApiHost>, settings: StdioSettings): Promise<void> {
  let gate: Gate | undefined;
  const endpoint = openHost().then(async (host): Promise<McpEndpoint> => {
    gate = await openGate(host, settings);
    return { host, gate, log: settings.log, mode: settings.mode };
  });
  // Awaited below; requests made meanwhile wait for it too.
  endpoint.catch(() => {});
  const client: McpClient = {
    credential: settings.apiKey ? `Bearer ${settings.apiKey}` : undefined,
    address: anonymousCaller('127.0.0.1'),
    requestId: randomUUID,
    transport: 'mcp-stdio',
  };
  const server = createMcpServer(endpoint, prepareCatalog(await chronoqlSchema()), client);
  const ended = new Promise<string>((resolve) => {
    process.stdin.once('end', () => resolve('stdin closed'));
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  try {
    await connectMcpServer(server, new StdioServerTransport(), settings.log, client);
    await endpoint;
    settings.log.info({ credential: settings.apiKey ? 'CHRONOQL_API_KEY' : 'none' }, 'serving MCP on stdio');
    settings.log.info({ reason: await ended }, 'MCP client gone; shutting down');
  } finally {
    await server.close();
    gate?.close();
  }
}
