/**
 * How an MCP request runs: as the GraphQL operation it stands for, under the rules every
 * transport keeps (README, "Limits and errors"). The caller is identified and charged one
 * operation of its rate budget, the operation is costed with the same estimator and charged,
 * and it runs in a request scope with the same deadline and response budget. What went wrong is
 * told with the codes and messages GraphQL clients get, and logged with the request id.
 */
import {
  execute,
  GraphQLError,
  Kind,
  locatedError,
  parse,
  validate,
  type DocumentNode,
  type GraphQLFormattedError,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { inRequestScope, type RequestScope } from '../../platform/requestScope.js';
import type { Logger } from '../../platform/logger.js';
import { unauthenticated, type Principal } from '../auth.js';
import type { ApiHost } from '../context.js';
import { asReported, errorFormatter, logClientErrors, type Transport } from '../errorReporting.js';
import { callerOf, type Gate } from '../gate.js';
import { ResponseBudget } from '../responseBudget.js';
import { selectionSchema, type JsonSchema } from './operationSchemas.js';

/** Who sends MCP requests, as one transport knows them. */
export interface McpClient {
  /** The credential as an Authorization header value: the HTTP request's, or the configured API key over stdio. */
  credential: string | undefined;
  /** The client network an anonymous caller is counted as. */
  address: string;
  /** The id an operation is logged and reported under: the HTTP request's x-request-id, or a new one for each stdio request. */
  requestId(): string;
  transport: Transport;
}

/** What MCP needs of a running ChronoQL, shared by all its MCP sessions. */
export interface McpEndpoint {
  host: ApiHost;
  gate: Gate;
  log: Logger;
  mode: 'development' | 'production';
}

/** An operation parsed and checked against the schema once, at start. */
export interface PreparedOperation {
  name: string;
  document: DocumentNode;
  definition: OperationDefinitionNode;
  /** The JSON Schema of its data. */
  resultSchema: JsonSchema;
}

export function prepareOperation(schema: GraphQLSchema, source: string): PreparedOperation {
  const document = parse(source);
  const problems = validate(schema, document);
  if (problems.length > 0) throw new Error(`an MCP operation does not fit the schema: ${problems.map((problem) => problem.message).join('; ')}`);
  const definition = document.definitions.find((node): node is OperationDefinitionNode => node.kind === Kind.OPERATION_DEFINITION)!;
  const root = (definition.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType()) as GraphQLObjectType;
  return { name: definition.name?.value ?? 'anonymous', document, definition, resultSchema: selectionSchema(root, definition.selectionSet) };
}

/** A caller admitted for one operation. */
export interface Admitted {
  principal: Principal | null;
  caller: string;
  requestId: string;
}

/** Identifies the client and takes one operation of its rate budget, as /graphql does for each request. */
export async function admit(endpoint: McpEndpoint, client: McpClient, requestId: string): Promise<Admitted> {
  const { gate } = endpoint;
  const principal = await gate.identify(client.credential, client.address);
  if (!principal && gate.access.readAccess === 'key') {
    throw unauthenticated('this server needs an API key or token for every request (Authorization: Bearer …, or CHRONOQL_API_KEY for stdio)');
  }
  const caller = callerOf(principal, client.address);
  await gate.take(caller);
  return { principal, caller, requestId };
}

/** The errors an operation failed with (already GraphQL errors, as a GraphQL client would get them). */
export class OperationFailed extends Error {
  constructor(readonly errors: readonly GraphQLError[]) {
    super(errors.map((error) => error.message).join('; '));
  }
}

/** GraphQL names a variable; an MCP client gave it as an argument. */
const asArgument = (message: string): string => message.replace(/Variable "\$(\w+)"/g, 'argument "$1"');

/** Runs the operation as the admitted caller, within its cost, deadline and response budget; throws OperationFailed. */
export async function runOperation(
  endpoint: McpEndpoint,
  admitted: Admitted,
  operation: PreparedOperation,
  variables: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { gate, host } = endpoint;
  await gate.admit(admitted.caller, operation.document, { variables, operationName: operation.name });
  const scope: RequestScope = { caller: admitted.caller, deadline: Date.now() + gate.limits.requestBudgetMs };
  const budget = new ResponseBudget(gate.limits, scope);
  const contextValue = host.requestContext({ principal: admitted.principal, requestId: admitted.requestId, caller: admitted.caller, budget });
  const result = await inRequestScope(scope, () => execute({ schema: gate.schema, document: operation.document, variableValues: variables, contextValue }));
  if (budget.cutOff) throw new OperationFailed([budget.cutOff]);
  // Without data the operation never started: its variables, the tool's arguments, were refused.
  if (!('data' in result)) {
    throw new OperationFailed((result.errors ?? []).map((error) => new GraphQLError(error.message, { extensions: { code: 'BAD_USER_INPUT' } })));
  }
  if (result.errors?.length) throw new OperationFailed(result.errors);
  // graphql-js builds results on null-prototype objects; MCP clients get plain JSON.
  return JSON.parse(JSON.stringify(result.data)) as Record<string, unknown>;
}

/**
 * What the client is told of a failure, as GraphQL would tell it (codes, messages cut and
 * masked alike), logged once with the request id; `what` names the tool or resource.
 */
export function reportFailure(endpoint: McpEndpoint, client: McpClient, error: unknown, requestId: string, what: string): GraphQLFormattedError[] {
  // Anything else is wrapped as graphql-js wraps a resolver's error, so the formatter sees the original (a database problem, a shed request).
  const errors = error instanceof OperationFailed ? error.errors : [error instanceof GraphQLError ? error : locatedError(error, undefined, [])];
  const format = errorFormatter(endpoint.mode);
  logClientErrors(endpoint.log, format, client.transport, errors, { requestId, operationName: what });
  return errors.map((failure) => {
    const { message, extensions = {}, path } = format(asReported(failure, client.transport), failure);
    // The HTTP status GraphQL would answer with is no part of an MCP tool error.
    const { http: _status, ...told } = extensions;
    return { message: asArgument(message), ...(path?.length ? { path } : {}), extensions: told };
  });
}
