import 'reflect-metadata';
import { Arg, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { requireRole, Role } from '../auth.js';
import { SnapshotStatus } from '../../domain/model.js';
import { checkArticles } from '../../ingest/snapshotReader.js';
import type { RequestContext } from '../context.js';
import { startIngestJob } from '../ingestJobs.js';
import { DateTimeScalar } from '../scalars.js';
import { ArticleInput, Snapshot } from '../types.js';

/** A mutation waits this long for another ingest to finish before answering INGEST_IN_PROGRESS. */
const INGEST_LEASE_WAIT_MS = 5_000;

@Resolver(() => Snapshot)
export class SnapshotResolver {
  @Query(() => [Snapshot], { description: 'Every stored snapshot (INGESTING or COMPLETE, or FAILED when its ingest stopped part-way), oldest first.' })
  async snapshots(@Ctx() { loaders, services }: RequestContext): Promise<Snapshot[]> {
    return Promise.all((await loaders.snapshots()).map((snapshot) => services.ingest.withOutcome(snapshot)));
  }

  @Query(() => Snapshot, {
    nullable: true,
    description:
      'The snapshot with this id (its date, YYYY-MM-DD, or the ISO date-time it was taken at), also one whose ingest failed and was rolled back: poll it after ingestSnapshot until it is COMPLETE (and `searchable`) or FAILED.',
  })
  snapshot(@Ctx() { services }: RequestContext, @Arg('id', () => ID) id: string): Promise<Snapshot | null> {
    return services.ingest.snapshot(id);
  }

  @FieldResolver(() => Boolean, {
    description:
      'Whether every passage and sentence of this snapshot (and of any later one) can be found by every search mode on this server: each has its vector and is in the vector indexes. False until it is COMPLETE; usually true within seconds of that.',
  })
  searchable(@Root() snapshot: Snapshot, @Ctx() { services }: RequestContext): Promise<boolean> | boolean {
    return snapshot.status === SnapshotStatus.COMPLETE && services.retrieval.searchableFrom(snapshot.takenAt);
  }

  @Authorized(Role.WRITER)
  @Mutation(() => Snapshot, {
    description:
      'Starts ingesting a small dated snapshot and answers at once with the snapshot, INGESTING (COMPLETE when the same snapshot is already stored). Input, role, date order, size limits and another running ingest are checked first, and refused before anything is written; then poll snapshot(id) until it is COMPLETE and `searchable`, or FAILED with `failure`. Re-running the same snapshot changes nothing. Use `chronoql ingest` for large files. Needs the writer role (admin with `complete: true`, or for a takenAt more than 5 minutes past the server clock).',
  })
  async ingestSnapshot(
    @Ctx() context: RequestContext,
    @Arg('takenAt', () => DateTimeScalar) takenAt: Date,
    @Arg('articles', () => [ArticleInput]) articles: ArticleInput[],
    @Arg('source', () => String, { defaultValue: 'graphql' }) source: string,
    @Arg('complete', () => Boolean, { defaultValue: false, description: 'Remove articles this snapshot does not list (admin role).' })
    complete: boolean,
  ): Promise<Snapshot> {
    const { principal } = context;
    // A complete snapshot removes every article it does not list: one call can empty the store.
    if (complete) requireRole(principal, Role.ADMIN, 'ingestSnapshot with complete: true');
    const checked = checkArticles(
      articles.map((article, index) => ({ value: article, line: index + 1 })),
      'articles',
    );
    // Dating a snapshot ahead blocks every earlier-dated ingest until then: more than clock skew is an admin's call.
    const datedAheadAllowed = principal?.role === Role.ADMIN;
    return startIngestJob(context, checked, { takenAt, source, complete, datedAheadAllowed, leaseWaitMs: INGEST_LEASE_WAIT_MS });
  }
}
