import { AskResolver, EvidenceResolver } from './resolvers/AskResolver.js';
import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema, type AuthChecker } from 'type-graphql';
import { requireRole, type Role } from './auth.js';
import type { RequestContext } from './context.js';
import { ArticleResolver } from './resolvers/ArticleResolver.js';
import { BenchmarkResolver } from './resolvers/BenchmarkResolver.js';
import { ChangeResolver } from './resolvers/ChangeResolver.js';
import { SearchResolver } from './resolvers/SearchResolver.js';
import { SnapshotResolver } from './resolvers/SnapshotResolver.js';
import { FactResolver, SentenceResolver } from './resolvers/VersionResolvers.js';

let built: Promise<GraphQLSchema> | undefined;

/**
 * type-graphql insists on a PubSub even when every subscription brings its own `subscribe`.
 * ChronoQL's only subscription streams from the change feed, so topics are never used.
 */
const noTopics = {
  publish: (): never => {
    throw new Error('ChronoQL has no topic-based subscriptions; changes come from the change feed');
  },
  subscribe: (): never => {
    throw new Error('ChronoQL has no topic-based subscriptions; changes come from the change feed');
  },
};

/** `@Authorized(role)` fields: UNAUTHENTICATED without a credential, FORBIDDEN below the role. */
const checkRole: AuthChecker<RequestContext, Role> = ({ context, info }, roles) => {
  requireRole(context.principal, roles[0]!, `${info.parentType.name.toLowerCase()} ${info.fieldName}`);
  return true;
};

export function chronoqlSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers: [
      ArticleResolver,
      SentenceResolver,
      FactResolver,
      ChangeResolver,
      SnapshotResolver,
      SearchResolver,
      AskResolver,
      EvidenceResolver,
      BenchmarkResolver,
    ],
    validate: false,
    pubSub: noTopics,
    authChecker: checkRole,
  });
  return built;
}

/** The SDL checked in as schema/schema.graphql, sorted so it diffs well. */
export async function printChronoqlSchema(): Promise<string> {
  return printSchema(lexicographicSortSchema(await chronoqlSchema())) + '\n';
}
