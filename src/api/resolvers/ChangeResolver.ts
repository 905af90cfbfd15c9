import 'reflect-metadata';
import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requireRole, Role } from '../auth.js';
import { articleIdOf, ChangeKind } from '../../domain/model.js';
import type { RequestContext } from '../context.js';
import { checkPageSize, decodeSeqCursor } from '../cursors.js';
import { badUserInput } from '../errors.js';
import { changeConnection, factNode, sentenceNode } from '../nodes.js';
import { DateTimeScalar } from '../scalars.js';
import { Article, ChangeEvent, ChangeEventConnection, Fact, Sentence } from '../types.js';

function checkAfterSeq(afterSeq: number | null): number | null {
  if (afterSeq !== null && (!Number.isInteger(afterSeq) || afterSeq < 0)) {
    throw badUserInput(`afterSeq must be a non-negative integer, got ${afterSeq}`, 'afterSeq');
  }
  return afterSeq;
}

@Resolver(() => ChangeEvent)
export class ChangeResolver {
  @Query(() => ChangeEventConnection, { description: 'The change feed, in sequence order.' })
  async changes(
    @Ctx() { services }: RequestContext,
    @Arg('afterSeq', () => Int, { nullable: true, description: 'Start after this sequence number.' }) afterSeq: number | null,
    @Arg('first', () => Int, { defaultValue: 50 }) first: number,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('articleIds', () => [ID], { nullable: true }) articleIds: string[] | null,
    @Arg('kinds', () => [ChangeKind], { nullable: true }) kinds: ChangeKind[] | null,
    @Arg('since', () => DateTimeScalar, { nullable: true, description: 'Only changes dated (by their snapshot) after this.' }) since: Date | null,
    @Arg('until', () => DateTimeScalar, { nullable: true, description: 'Only changes dated at or before this.' }) until: Date | null,
  ): Promise<ChangeEventConnection> {
    const limit = checkPageSize(first);
    const resumeAfter = checkAfterSeq(afterSeq ?? null);
    if (resumeAfter !== null) await services.changeFeed.checkResumePoint(resumeAfter);
    const start = Math.max(resumeAfter ?? 0, after == null ? 0 : decodeSeqCursor(after));
    if (since && until && since >= until) throw badUserInput(`since (${since.toISOString()}) must be before until (${until.toISOString()})`, 'since');
    const filter = { articleIds: articleIds?.map(articleIdOf) ?? null, kinds, since, until };
    const [page, totalCount] = await Promise.all([services.reads.changesBetween(start, null, filter, limit + 1), services.reads.countChanges(filter)]);
    return changeConnection(page.slice(0, limit), {
      hasNextPage: page.length > limit,
      hasPreviousPage: start > 0,
      totalCount,
    });
  }

  @Subscription(() => ChangeEvent, {
    name: 'changes',
    description:
      'Stored changes after afterSeq, then live ones as snapshots are ingested, in order, without gaps or duplicates. Reconnect with the last seq seen to resume. When a snapshot whose changes were sent is rolled back, the subscription ends with CHANGES_WITHDRAWN and extensions.resumeAfterSeq: drop what came after it and resubscribe from there. An afterSeq past every change ever recorded is refused (BAD_USER_INPUT). Needs an API key or token (reader role).',
    subscribe: async ({ args, context }) => {
      // Checked here, before the feed is opened: type-graphql's @Authorized guards only each event's resolve.
      requireRole((context as RequestContext).principal, Role.READER, 'subscription changes');
      const { afterSeq, articleIds, kinds } = args as { afterSeq?: number | null; articleIds?: string[]; kinds?: ChangeKind[] };
      const feed = (context as RequestContext).services.changeFeed;
      // Refused here, it is answered with its code; met inside the stream, it would reach the client as an internal error.
      const resumeAfter = checkAfterSeq(afterSeq ?? null);
      await feed.checkResumePoint(resumeAfter);
      return feed.subscribe({
        afterSeq: resumeAfter,
        articleIds: articleIds?.map(articleIdOf),
        kinds,
      });
    },
  })
  changeStream(
    @Root() event: ChangeEvent,
    @Arg('afterSeq', () => Int, { nullable: true }) _afterSeq: number | null,
    @Arg('articleIds', () => [ID], { nullable: true }) _articleIds: string[] | null,
    @Arg('kinds', () => [ChangeKind], { nullable: true }) _kinds: ChangeKind[] | null,
  ): ChangeEvent {
    return event;
  }

  @FieldResolver(() => Article, { nullable: true })
  article(@Root() event: ChangeEvent, @Ctx() { loaders }: RequestContext): Promise<Article | null> {
    return loaders.article.load(event.articleId);
  }

  @FieldResolver(() => Sentence, { nullable: true, description: 'The sentence version the change created.' })
  async sentence(@Root() event: ChangeEvent, @Ctx() { loaders }: RequestContext): Promise<Sentence | null> {
    const record = event.sentenceId === null ? null : await loaders.sentence.load(event.sentenceId);
    return record && sentenceNode(record);
  }

  @FieldResolver(() => Sentence, { nullable: true, description: 'The sentence version the change closed.' })
  async previousSentence(@Root() event: ChangeEvent, @Ctx() { loaders }: RequestContext): Promise<Sentence | null> {
    const record = event.previousSentenceId === null ? null : await loaders.sentence.load(event.previousSentenceId);
    return record && sentenceNode(record);
  }

  @FieldResolver(() => Fact, { nullable: true, description: 'The fact version the change created.' })
  async fact(@Root() event: ChangeEvent, @Ctx() { loaders }: RequestContext): Promise<Fact | null> {
    const record = event.factId === null ? null : await loaders.fact.load(event.factId);
    return record && factNode(record);
  }

  @FieldResolver(() => Fact, { nullable: true, description: 'The fact version the change made OUTDATED.' })
  async previousFact(@Root() event: ChangeEvent, @Ctx() { loaders }: RequestContext): Promise<Fact | null> {
    const record = event.previousFactId === null ? null : await loaders.fact.load(event.previousFactId);
    return record && factNode(record);
  }
}
