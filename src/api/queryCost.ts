/**
 * What a query will cost, estimated before anything runs (graphql-query-complexity walks the
 * selection): every field costs 1, a list multiplies what is selected inside it by how long such
 * lists are, and searching and answering add their work per query or question. Lists with a
 * `first`, `k` or a batch of inputs are as long as asked; the unpaginated ones (an article's
 * sentences and facts, a fact's history, the snapshots) are as long as the store's longest,
 * re-read whenever the change feed moves and every few minutes. So `sentences { article {
 * sentences … } }` costs sentences² of the longest article and is refused before it can fan out;
 * what the estimate misses, the response budget (responseBudget.ts) stops while it runs.
 */
import { createRequire } from 'node:module';
import {
  GraphQLError,
  getNullableType,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  type DocumentNode,
  type GraphQLSchema,
} from 'graphql';
import type { ComplexityEstimator } from 'graphql-query-complexity';
import type { Logger } from '../platform/logger.js';

// The package's ES build imports graphql's .mjs files, a second copy of graphql beside the one the
// schema is built with (graphql refuses to mix them); its CommonJS build shares ours.
const { getComplexity } = createRequire(import.meta.url)('graphql-query-complexity') as typeof import('graphql-query-complexity');

/** How long the store's unpaginated lists can be: the longest of each kind, over all articles or facts. */
export interface ListSizes {
  sentencesPerArticle: number;
  factsPerArticle: number;
  versionsPerFact: number;
  snapshots: number;
}

/** Before the store has been read, and the least any list is assumed to hold. */
export const MIN_LIST_SIZES: ListSizes = { sentencesPerArticle: 50, factsPerArticle: 20, versionsPerFact: 5, snapshots: 10 };

/** Lists whose length the caller does not choose and the store does not say (answer parts, tallies). */
const OTHER_LIST_SIZE = 10;
/** One query's search (lexical, dense and their fusion), on top of the hits it returns. */
const SEARCH_WORK = 10;
/** One question: decision, retrieval rounds, reading and the certainty gate. */
const ASK_WORK = 50;
/** Benchmark sizes come per snapshot × kind × type. */
const BENCHMARK_SIZES_PER_SNAPSHOT = 12;

function storeListSize(sizes: ListSizes, typeName: string, fieldName: string): number | undefined {
  switch (`${typeName}.${fieldName}`) {
    case 'Article.sentences':
    case 'Article.deletedSentences':
      return sizes.sentencesPerArticle;
    case 'Article.facts':
      return sizes.factsPerArticle;
    case 'Query.factHistory':
      return sizes.versionsPerFact;
    case 'Query.snapshots':
      return sizes.snapshots;
    case 'Query.benchmarkStats':
      return sizes.snapshots * BENCHMARK_SIZES_PER_SNAPSHOT;
    default:
      return undefined;
  }
}

const count = (value: unknown, fallback: number): number => (typeof value === 'number' && Number.isFinite(value) ? Math.max(0, value) : fallback);

/** The estimator, reading list sizes through `sizes` at each estimate. */
export function chronoqlEstimator(sizes: () => ListSizes): ComplexityEstimator {
  return ({ type, field, args, childComplexity }) => {
    if (Array.isArray(args.queries)) return args.queries.length * (SEARCH_WORK + count(args.k, 10) * childComplexity);
    if (Array.isArray(args.questions)) {
      return (args.questions as Array<{ k?: unknown }>).reduce((total, question) => total + ASK_WORK + count(question?.k, 3) * 2 + childComplexity, 0);
    }
    if (field.name === 'ask') return ASK_WORK + count(args.k, 3) * 2 + childComplexity;
    if (field.name === 'search') return SEARCH_WORK + count(args.k, 10) * childComplexity;
    if (typeof args.first === 'number') return 1 + count(args.first, 0) * childComplexity;
    if (isListType(getNullableType(field.type))) {
      return 1 + (storeListSize(sizes(), type.name, field.name) ?? OTHER_LIST_SIZE) * childComplexity;
    }
    return 1 + childComplexity;
  };
}

/** The least time between two reads of the list sizes (each scans every sentence and fact version). */
const MIN_REFRESH_GAP_MS = 2_000;

/** Keeps the store's list sizes, re-read in the background; the estimate never waits for Neo4j. */
export class ListSizeStatistics {
  private sizes: ListSizes = MIN_LIST_SIZES;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private readAgain = false;

  constructor(
    private readonly read: () => Promise<Partial<ListSizes>>,
    private readonly log: Logger,
  ) {}

  current = (): ListSizes => this.sizes;

  async refresh(): Promise<void> {
    try {
      const read = await this.read();
      this.sizes = {
        sentencesPerArticle: Math.max(MIN_LIST_SIZES.sentencesPerArticle, read.sentencesPerArticle ?? 0),
        factsPerArticle: Math.max(MIN_LIST_SIZES.factsPerArticle, read.factsPerArticle ?? 0),
        versionsPerFact: Math.max(MIN_LIST_SIZES.versionsPerFact, read.versionsPerFact ?? 0),
        snapshots: Math.max(MIN_LIST_SIZES.snapshots, read.snapshots ?? 0),
      };
    } catch (error) {
      this.log.warn({ err: error }, 'could not read list sizes for query costs; keeping the last ones');
    }
  }

  /**
   * Reads again soon because the store changed: an article that just grew must be costed by its
   * new length. Reads do not overlap, and come at most every MIN_REFRESH_GAP_MS while an ingest
   * keeps writing.
   */
  refreshSoon(): void {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = this.refresh()
      .then(() => new Promise<void>((resolve) => setTimeout(resolve, MIN_REFRESH_GAP_MS).unref()))
      .finally(() => {
        this.reading = null;
        if (this.readAgain) {
          this.readAgain = false;
          this.refreshSoon();
        }
      });
  }

  /** Reads now, then every `everyMs` in the background. */
  async start(everyMs: number): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/**
 * Introspection, costed by what it can return: the schema is fixed, so its lists are as long as
 * the schema makes them. `types` lists every type and `directives` every directive; a type's
 * fields, input fields, enum values, interfaces and possible types are as many as the schema has
 * per type, and a field's or a directive's arguments as many as it has per field or directive.
 * Summed over the types, that is what enumerating the schema returns, as GraphiQL does to load
 * it. The longest lists instead would cost every type as the widest one with the most arguments
 * on each field: 265,737 for GraphiQL's query, which returns 4,762 fields. Other fields are left
 * to the next estimator.
 */
function introspectionEstimator(schema: GraphQLSchema): ComplexityEstimator {
  const types = Object.values(schema.getTypeMap());
  const fields = types.flatMap((type) => (isObjectType(type) || isInterfaceType(type) ? Object.values(type.getFields()) : []));
  const directives = schema.getDirectives();
  const total = (sizes: number[]): number => sizes.reduce((sum, size) => sum + size, 0);
  const perType = (size: (type: (typeof types)[number]) => number): number => total(types.map(size)) / types.length;
  const listSizes = new Map<string, number>([
    ['__Schema.types', types.length],
    ['__Schema.directives', directives.length],
    ['__Type.fields', fields.length / types.length],
    ['__Type.inputFields', perType((type) => (isInputObjectType(type) ? Object.keys(type.getFields()).length : 0))],
    ['__Type.enumValues', perType((type) => (isEnumType(type) ? type.getValues().length : 0))],
    ['__Type.interfaces', perType((type) => (isObjectType(type) || isInterfaceType(type) ? type.getInterfaces().length : 0))],
    ['__Type.possibleTypes', perType((type) => (isAbstractType(type) ? schema.getPossibleTypes(type).length : 0))],
    ['__Field.args', total(fields.map((field) => field.args.length)) / Math.max(1, fields.length)],
    ['__Directive.args', total(directives.map((directive) => directive.args.length)) / Math.max(1, directives.length)],
  ]);
  return ({ type, field, childComplexity }) => {
    const size = listSizes.get(`${type.name}.${field.name}`);
    return size === undefined ? undefined : 1 + size * childComplexity;
  };
}

const introspectionEstimators = new WeakMap<GraphQLSchema, ComplexityEstimator>();

/** The estimated cost of one operation; refused with QUERY_TOO_COSTLY (400) above `maxCost`. */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  request: { variables?: Record<string, unknown> | null; operationName?: string | null },
  estimator: ComplexityEstimator,
  maxCost: number,
): number {
  let cost: number;
  try {
    if (!introspectionEstimators.has(schema)) introspectionEstimators.set(schema, introspectionEstimator(schema));
    const estimators = [introspectionEstimators.get(schema)!, estimator];
    cost = getComplexity({ schema, query: document, variables: request.variables ?? {}, operationName: request.operationName ?? undefined, estimators });
  } catch (error) {
    // The estimate reads the variables before execution would: a bad one is the caller's, as it would be there.
    if (!(error instanceof GraphQLError)) throw error;
    throw new GraphQLError(error.message, { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } });
  }
  if (cost > maxCost) {
    throw new GraphQLError(
      `this query would cost about ${Math.round(cost)}, over the limit of ${maxCost}: lists multiply what is selected inside them (ask for fewer items, or nest lists less deeply)`,
      { extensions: { code: 'QUERY_TOO_COSTLY', cost: Math.round(cost), maxCost, http: { status: 400 } } },
    );
  }
  return cost;
}
