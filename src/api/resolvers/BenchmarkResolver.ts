import 'reflect-metadata';
import { Arg, Ctx, Int, Query, Resolver } from 'type-graphql';
import type { BenchmarkItemType as ItemType, BenchmarkKind as Kind } from '../../domain/model.js';
import { BenchmarkItem, BenchmarkItemConnection, BenchmarkItemType, BenchmarkKind, BenchmarkSize } from '../benchmarkTypes.js';
import type { RequestContext } from '../context.js';
import { checkPageSize, decodeCursor, encodeCursor } from '../cursors.js';
import { connection } from '../nodes.js';
import { DateTimeScalar } from '../scalars.js';

@Resolver(() => BenchmarkItem)
export class BenchmarkResolver {
  @Query(() => BenchmarkItemConnection, {
    description: 'The living benchmark as of a date: the item versions valid then, with their type at that snapshot, ordered by item id.',
  })
  async benchmark(
    @Ctx() { services, now }: RequestContext,
    @Arg('asOf', () => DateTimeScalar, { nullable: true, description: 'Defaults to now, i.e. the latest snapshot.' }) asOf: Date | null,
    @Arg('kinds', () => [BenchmarkKind], { nullable: true }) kinds: Kind[] | null,
    @Arg('types', () => [BenchmarkItemType], { nullable: true }) types: ItemType[] | null,
    @Arg('first', () => Int, { defaultValue: 20 }) first: number,
    @Arg('after', () => String, { nullable: true }) after: string | null,
  ): Promise<BenchmarkItemConnection> {
    const page = await services.benchmarkItems.page(
      { asOf: asOf ?? now, kinds: kinds && kinds.length > 0 ? kinds : null, types: types && types.length > 0 ? types : null },
      checkPageSize(first),
      after == null ? null : decodeCursor('benchmark', after),
    );
    return connection<BenchmarkItem>(page.items, (item) => encodeCursor('benchmark', item.itemId), {
      hasNextPage: page.hasNext,
      hasPreviousPage: after != null,
      totalCount: page.total,
    });
  }

  @Query(() => [BenchmarkSize], { description: "Each complete snapshot's benchmark size per kind and type, oldest snapshot first." })
  benchmarkStats(@Ctx() { services }: RequestContext): Promise<BenchmarkSize[]> {
    return services.benchmarkItems.sizes();
  }
}
