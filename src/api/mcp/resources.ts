/**
 * ChronoQL's MCP resources, for a client to attach as context: an article as of a date, as
 * Markdown (`chronoql://article/{id}?asOf=…`), and the list of snapshots (`chronoql://snapshots`).
 * Each read is a GraphQL operation run like a tool's (operations.ts).
 */
import { ErrorCode, McpError, type ReadResourceResult, type Resource, type ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { GraphQLError } from 'graphql';
import { quoteInput } from '../../domain/errors.js';
import { badUserInput } from '../errors.js';

export const SNAPSHOTS_URI = 'chronoql://snapshots';
const ARTICLE_PREFIX = 'chronoql://article/';

export const RESOURCE_OPERATIONS = {
  snapshots: `query SnapshotList { snapshots { id takenAt recordedAt source status complete articleCount changeCount } }`,
  article: `query ArticleResource($id: ID!, $asOf: DateTime) {
    article(id: $id) { id title text(asOf: $asOf) facts(asOf: $asOf) { attribute value validFrom validTo } }
  }`,
  articleList: `query ArticleList($after: String) { articles(first: 100, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id title } } } }`,
} as const;

export const SNAPSHOTS_RESOURCE: Resource = {
  uri: SNAPSHOTS_URI,
  name: 'snapshots',
  title: 'Snapshots',
  description: 'Every ingested snapshot, oldest first: its date (the start of its valid time), status, articles and change events.',
  mimeType: 'application/json',
};

export const ARTICLE_TEMPLATE: ResourceTemplate = {
  uriTemplate: `${ARTICLE_PREFIX}{id}{?asOf}`,
  name: 'article',
  title: 'An article as of a date',
  description:
    'The text of an article and its infobox facts as they stood at asOf (a date such as 2024-08-01, or an RFC 3339 date-time; now when left out), as Markdown. The id is URI-encoded.',
  mimeType: 'text/markdown',
};

export const articleUri = (id: string): string => `${ARTICLE_PREFIX}${encodeURIComponent(id)}`;

export function articleResource(node: { id: string; title: string }): Resource {
  return { uri: articleUri(node.id), name: node.id, title: node.title, description: `${node.title} as of now`, mimeType: 'text/markdown' };
}

export type ResourceAddress = { kind: 'snapshots' } | { kind: 'article'; id: string; asOf: string | null };

/** What a resource URI names; BAD_USER_INPUT for anything else. */
export function resourceAddress(uri: string): ResourceAddress {
  const refuse = (why: string) => badUserInput(`${quoteInput(uri)} is not a ChronoQL resource: ${why}`, 'uri');
  if (uri === SNAPSHOTS_URI) return { kind: 'snapshots' };
  if (!uri.startsWith(ARTICLE_PREFIX)) throw refuse(`resources are ${SNAPSHOTS_URI} and ${ARTICLE_TEMPLATE.uriTemplate}`);
  const [path, query = ''] = uri.slice(ARTICLE_PREFIX.length).split(/\?(.*)/s, 2);
  let id: string;
  try {
    id = decodeURIComponent(path!);
  } catch {
    throw refuse('the article id is not URI-encoded UTF-8');
  }
  if (id === '') throw refuse('it names no article id');
  const parameters = new URLSearchParams(query);
  const unknown = [...parameters.keys()].filter((key) => key !== 'asOf');
  if (unknown.length > 0) throw refuse(`the only parameter is asOf, got ${quoteInput(unknown[0]!)}`);
  return { kind: 'article', id, asOf: parameters.get('asOf') };
}

interface ArticleData {
  id: string;
  title: string;
  text: string | null;
  facts: Array<{ attribute: string; value: string; validFrom: string; validTo: string | null }>;
}

const day = (instant: string): string => (instant.endsWith('T00:00:00.000Z') ? instant.slice(0, 10) : instant);

/** An article as Markdown: its title, when it was read as of, its text and its facts with the time each held. */
export function articleContents(uri: string, address: { id: string; asOf: string | null }, article: ArticleData | null): ReadResourceResult {
  const notFound = (message: string) => new GraphQLError(message, { extensions: { code: NOT_FOUND } });
  if (!article) throw notFound(`no article has the id ${quoteInput(address.id)}`);
  const when = address.asOf ? `as of ${address.asOf}` : 'as of now';
  if (article.text === null) throw notFound(`the article ${quoteInput(address.id)} did not exist ${when}`);
  const facts = article.facts.map(
    (fact) => `- ${fact.attribute}: ${fact.value} (since ${day(fact.validFrom)}${fact.validTo ? `, until ${day(fact.validTo)}` : ''})`,
  );
  const text = [`# ${article.title}`, `_${when}_`, article.text, ...(facts.length > 0 ? ['## Facts', facts.join('\n')] : [])].join('\n\n');
  return { contents: [{ uri, mimeType: 'text/markdown', text: `${text}\n` }] };
}

export function snapshotContents(snapshots: unknown): ReadResourceResult {
  return { contents: [{ uri: SNAPSHOTS_URI, mimeType: 'application/json', text: JSON.stringify(snapshots, null, 2) }] };
}

const NOT_FOUND = 'NOT_FOUND';
/** JSON-RPC codes: MCP's for a resource that does not exist, and the range for errors a server defines (a refusal, a failure not the request's fault). */
const RESOURCE_NOT_FOUND = -32002;
const SERVER_ERROR = -32000;

/** How a failed resource request is told: a JSON-RPC error whose data holds the GraphQL errors (with their codes) and the request id. */
export function resourceError(errors: ReadonlyArray<{ message: string; extensions?: Record<string, unknown> }>, requestId: string): McpError {
  const first = errors[0]!;
  const code = first.extensions?.code;
  return new McpError(code === 'BAD_USER_INPUT' ? ErrorCode.InvalidParams : code === NOT_FOUND ? RESOURCE_NOT_FOUND : SERVER_ERROR, first.message, {
    errors,
    requestId,
  });
}
