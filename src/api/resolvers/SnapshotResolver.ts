import 'reflect-metadata';
import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { requireRole, Role } from '../auth.js';
import { checkArticles } from '../../ingest/snapshotReader.js';
import type { RequestContext } from '../context.js';
import { DateTimeScalar } from '../scalars.js';
import { ArticleInput, IngestReport, Snapshot } from '../types.js';

/** A mutation waits this long for another ingest to finish before answering INGEST_IN_PROGRESS. */
const INGEST_LEASE_WAIT_MS = 5_000;

@Resolver(() => Snapshot)
export class SnapshotResolver {
  @Query(() => [Snapshot], { description: 'Every ingested snapshot, oldest first.' })
  snapshots(@Ctx() { loaders }: RequestContext): Promise<Snapshot[]> {
    return loaders.snapshots();
  }

  @Authorized(Role.WRITER)
  @Mutation(() => IngestReport, {
    description:
      'Ingests a small dated snapshot and makes it searchable. Validated whole before anything is written; re-running the same snapshot changes nothing. Use `chronoql ingest` for large files. Needs the writer role (admin with `complete: true`, or for a takenAt more than 5 minutes past the server clock).',
  })
  async ingestSnapshot(
    @Ctx() { services, principal }: RequestContext,
    @Arg('takenAt', () => DateTimeScalar) takenAt: Date,
    @Arg('articles', () => [ArticleInput]) articles: ArticleInput[],
    @Arg('source', () => String, { defaultValue: 'graphql' }) source: string,
    @Arg('complete', () => Boolean, { defaultValue: false, description: 'Remove articles this snapshot does not list (admin role).' })
    complete: boolean,
  ): Promise<IngestReport> {
    // A complete snapshot removes every article it does not list: one call can empty the store.
    if (complete) requireRole(principal, Role.ADMIN, 'ingestSnapshot with complete: true');
    const checked = checkArticles(
      articles.map((article, index) => ({ value: article, line: index + 1 })),
      'articles',
    );
    // Dating a snapshot ahead blocks every earlier-dated ingest until then: more than clock skew is an admin's call.
    const datedAheadAllowed = principal?.role === Role.ADMIN;
    const report = await services.ingest.ingest(checked, { takenAt, source, complete, datedAheadAllowed, leaseWaitMs: INGEST_LEASE_WAIT_MS });
    // Searchable as soon as the mutation returns, not at the next background refresh.
    await services.retrieval.catchUp(undefined, takenAt);
    return report;
  }
}
