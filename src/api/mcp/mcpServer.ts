/**
 * ChronoQL as a Model Context Protocol server (the SDK's low-level Server): its tools
 * (tools.ts) and resources (resources.ts), each request run as a GraphQL operation under the
 * API's rules (operations.ts). The high-level McpServer would answer an unknown tool or a
 * mistyped argument itself, before any of that: unlogged, uncharged and without the codes
 * GraphQL clients get.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ListResourcesResult,
  type ReadResourceResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { quoteInput } from '../../domain/errors.js';
import type { Logger } from '../../platform/logger.js';
import { projectRoot } from '../../platform/paths.js';
import { badUserInput } from '../errors.js';
import { admit, prepareOperation, reportFailure, runOperation, type McpClient, type McpEndpoint, type PreparedOperation } from './operations.js';
import { variablesSchema } from './operationSchemas.js';
import {
  ARTICLE_TEMPLATE,
  articleContents,
  articleResource,
  resourceAddress,
  resourceError,
  RESOURCE_OPERATIONS,
  snapshotContents,
  SNAPSHOTS_RESOURCE,
} from './resources.js';
import { TOOLS, type ToolDefinition } from './tools.js';

const INSTRUCTIONS =
  'ChronoQL is a temporal knowledge graph: dated snapshots of articles (text and infobox facts), with every version kept and the period it was valid. ' +
  'Every tool answers "as of" a date (asOf, default now) with what was valid then. ask answers a question, and abstains (adopted: false, text: null, with its best guess and why) rather than state an answer it does not trust; ' +
  'search finds passages; fact_as_of and fact_history give one attribute of an article at a date or over time; article_as_of gives an article at a date or what changed in it since another; changes_since reads the change feed. ' +
  'Resources: chronoql://article/{id}?asOf=DATE (an article as Markdown) and chronoql://snapshots.';

/** A server validates only what it asks of a client (ChronoQL asks nothing), and each would build its own Ajv: 2 ms of every HTTP request. */
const VALIDATOR = new AjvJsonSchemaValidator();

const VERSION = (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;

interface PreparedTool {
  definition: ToolDefinition;
  operation: PreparedOperation;
  listing: Tool;
}

/** The tools and resource reads, parsed and checked against the schema once per process. */
export interface McpCatalog {
  tools: Map<string, PreparedTool>;
  resources: Record<keyof typeof RESOURCE_OPERATIONS, PreparedOperation>;
}

export function prepareCatalog(schema: GraphQLSchema): McpCatalog {
  const tools = TOOLS.map((definition): PreparedTool => {
    const operation = prepareOperation(schema, definition.operation);
    const inputSchema = variablesSchema(schema, operation.definition, definition.arguments, definition.derived?.names);
    return {
      definition,
      operation,
      listing: {
        name: definition.name,
        title: definition.title,
        description: definition.description,
        inputSchema: inputSchema as Tool['inputSchema'],
        outputSchema: operation.resultSchema as Tool['outputSchema'],
        annotations: definition.annotations,
      },
    };
  });
  const resource = (source: string) => prepareOperation(schema, source);
  return {
    tools: new Map(tools.map((tool) => [tool.definition.name, tool])),
    resources: {
      snapshots: resource(RESOURCE_OPERATIONS.snapshots),
      article: resource(RESOURCE_OPERATIONS.article),
      articleList: resource(RESOURCE_OPERATIONS.articleList),
    },
  };
}

/** A tool's arguments as its operation's variables: only those it declares, within the size of a GraphQL request body. */
function variablesOf(tool: PreparedTool, args: Record<string, unknown>, maxBytes: number): Record<string, unknown> {
  const size = Buffer.byteLength(JSON.stringify(args));
  if (size > maxBytes) {
    throw new GraphQLError(`the arguments take ${size} bytes of JSON, over the limit of ${maxBytes} (a GraphQL request body's)`, {
      extensions: { code: 'PAYLOAD_TOO_LARGE' },
    });
  }
  const declared = Object.keys((tool.listing.inputSchema.properties ?? {}) as object);
  const unknown = Object.keys(args).filter((name) => !declared.includes(name));
  if (unknown.length > 0) {
    throw badUserInput(`${tool.definition.name} has no argument ${quoteInput(unknown[0]!)}; its arguments are ${declared.join(', ')}`, unknown[0]);
  }
  return { ...args, ...tool.definition.derived?.values(args) };
}

async function callTool(endpoint: McpEndpoint, catalog: McpCatalog, client: McpClient, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const requestId = client.requestId();
  try {
    const admitted = await admit(endpoint, client, requestId);
    const tool = catalog.tools.get(name);
    if (!tool) throw badUserInput(`there is no tool ${quoteInput(name)}; the tools are ${[...catalog.tools.keys()].join(', ')}`, 'name');
    const data = await runOperation(endpoint, admitted, tool.operation, variablesOf(tool, args, endpoint.gate.limits.maxBodyBytes));
    return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
  } catch (error) {
    const errors = reportFailure(endpoint, client, error, requestId, `tool ${name}`);
    return { isError: true, content: [{ type: 'text', text: JSON.stringify({ errors, requestId }) }] };
  }
}

/** Runs one resource request as an operation of the caller's; a failure is a JSON-RPC error with the GraphQL codes. */
async function resourceRequest<T>(
  endpoint: McpEndpoint,
  client: McpClient,
  what: string,
  work: (run: (operation: PreparedOperation, variables: Record<string, unknown>) => Promise<Record<string, unknown>>) => Promise<T>,
): Promise<T> {
  const requestId = client.requestId();
  try {
    const admitted = await admit(endpoint, client, requestId);
    return await work((operation, variables) => runOperation(endpoint, admitted, operation, variables));
  } catch (error) {
    throw resourceError(reportFailure(endpoint, client, error, requestId, what), requestId);
  }
}

function readResource(endpoint: McpEndpoint, catalog: McpCatalog, client: McpClient, uri: string): Promise<ReadResourceResult> {
  return resourceRequest(endpoint, client, `resource ${uri}`, async (run) => {
    const address = resourceAddress(uri);
    if (address.kind === 'snapshots') return snapshotContents((await run(catalog.resources.snapshots, {})).snapshots);
    const data = await run(catalog.resources.article, { id: address.id, asOf: address.asOf });
    return articleContents(uri, address, data.article as Parameters<typeof articleContents>[2]);
  });
}

function listResources(endpoint: McpEndpoint, catalog: McpCatalog, client: McpClient, cursor: string | undefined): Promise<ListResourcesResult> {
  return resourceRequest(endpoint, client, 'resources/list', async (run) => {
    const data = await run(catalog.resources.articleList, { after: cursor ?? null });
    const page = data.articles as { pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: Array<{ node: { id: string; title: string } }> };
    return {
      resources: [...(cursor ? [] : [SNAPSHOTS_RESOURCE]), ...page.edges.map((edge) => articleResource(edge.node))],
      ...(page.pageInfo.hasNextPage && page.pageInfo.endCursor ? { nextCursor: page.pageInfo.endCursor } : {}),
    };
  });
}

/**
 * An MCP server for one client (a stdio process, or one stateless HTTP request). It lists its
 * tools at once; requests that need the store wait for `endpoint` (a stdio process answers its
 * client's handshake while it still opens the store).
 */
export function createMcpServer(endpoint: Promise<McpEndpoint>, catalog: McpCatalog, client: McpClient): Server {
  const server = new Server(
    { name: 'chronoql', title: 'ChronoQL', version: VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: VALIDATOR },
  );
  const listing = [...catalog.tools.values()].map((tool) => tool.listing);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
  server.setRequestHandler(CallToolRequestSchema, async (request) =>
    callTool(await endpoint, catalog, client, request.params.name, request.params.arguments ?? {}),
  );
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => listResources(await endpoint, catalog, client, request.params?.cursor));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [ARTICLE_TEMPLATE] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => readResource(await endpoint, catalog, client, request.params.uri));
  return server;
}

/**
 * Connects the server to its transport, logging the JSON-RPC errors the SDK answers itself (an
 * unknown method, malformed parameters) as the rest are: failed tool calls and resource reads
 * log theirs, with the request id their error carries.
 */
export async function connectMcpServer(server: Server, transport: Transport, log: Logger, client: McpClient): Promise<void> {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if ('error' in message && (message.error.data as { requestId?: unknown } | undefined)?.requestId === undefined) {
      const { code, message: told } = message.error;
      log.warn({ requestId: client.requestId(), jsonRpcId: message.id, transport: client.transport, code, message: told }, 'MCP request refused');
    }
    return send(message, options);
  };
  await server.connect(transport);
}
