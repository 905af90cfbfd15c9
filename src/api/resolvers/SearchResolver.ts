import 'reflect-metadata';
import { Arg, Ctx, FieldResolver, Int, Query, Resolver, Root } from 'type-graphql';
import { SearchMode, SearchUnit } from '../../retrieval/retriever.js';
import type { RequestContext } from '../context.js';
import { badUserInput } from '../errors.js';
import { DateTimeScalar } from '../scalars.js';
import type { Period } from '../../domain/time.js';
import { Article, PeriodInput, SearchHit } from '../types.js';

const MAX_K = 100;
const MAX_QUERIES = 256;

function checkK(k: number): number {
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) throw badUserInput(`k must be between 1 and ${MAX_K}, got ${k}`, 'k');
  return k;
}

function checkPeriod(during: PeriodInput | null): Period | null {
  if (!during) return null;
  const period = { from: during.from ?? null, to: during.to ?? null };
  if (period.from === null && period.to === null) throw badUserInput('during: give from, to or both', 'during');
  if (period.from && period.to && period.from >= period.to) throw badUserInput('during: from must be before to', 'during');
  return period;
}

const DURING = {
  nullable: true,
  description: 'Keep only passages or sentences whose text speaks of a time overlapping this period (event time), beside asOf.',
} as const;

@Resolver(() => SearchHit)
export class SearchResolver {
  @Query(() => [SearchHit], { description: 'Passages or sentences valid at asOf that best match the query.' })
  search(
    @Ctx() { services, now }: RequestContext,
    @Arg('query', () => String) query: string,
    @Arg('asOf', () => DateTimeScalar, { nullable: true, description: 'Defaults to now.' }) asOf: Date | null,
    @Arg('k', () => Int, { defaultValue: 10 }) k: number,
    @Arg('mode', () => SearchMode, { defaultValue: SearchMode.HYBRID }) mode: SearchMode,
    @Arg('unit', () => SearchUnit, { defaultValue: SearchUnit.PASSAGE }) unit: SearchUnit,
    @Arg('during', () => PeriodInput, DURING) during: PeriodInput | null,
  ): Promise<SearchHit[]> {
    return services.retrieval.search(query, { asOf: asOf ?? now, k: checkK(k), mode, unit, during: checkPeriod(during) });
  }

  @Query(() => [[SearchHit]], { description: 'Many searches in one call (the dense side is one batched native search).' })
  batchSearch(
    @Ctx() { services, now }: RequestContext,
    @Arg('queries', () => [String]) queries: string[],
    @Arg('asOf', () => DateTimeScalar, { nullable: true }) asOf: Date | null,
    @Arg('k', () => Int, { defaultValue: 10 }) k: number,
    @Arg('mode', () => SearchMode, { defaultValue: SearchMode.HYBRID }) mode: SearchMode,
    @Arg('unit', () => SearchUnit, { defaultValue: SearchUnit.PASSAGE }) unit: SearchUnit,
    @Arg('during', () => PeriodInput, DURING) during: PeriodInput | null,
  ): Promise<SearchHit[][]> {
    if (queries.length > MAX_QUERIES) throw badUserInput(`at most ${MAX_QUERIES} queries, got ${queries.length}`, 'queries');
    return services.retrieval.batchSearch(queries, { asOf: asOf ?? now, k: checkK(k), mode, unit, during: checkPeriod(during) });
  }

  @FieldResolver(() => Article, { nullable: true })
  article(@Root() hit: SearchHit, @Ctx() { loaders }: RequestContext): Promise<Article | null> {
    return loaders.article.load(hit.articleId);
  }
}
