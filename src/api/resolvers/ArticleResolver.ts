import 'reflect-metadata';
import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from 'type-graphql';
import { articleIdOf, ChangeKind, SentenceLabel } from '../../domain/model.js';
import { labelInSnapshot, snapshotInEffect } from '../../ingest/sentenceLabels.js';
import type { RequestContext } from '../context.js';
import { checkPageSize, decodeCursor, decodeSeqCursor, encodeCursor } from '../cursors.js';
import { changeConnection, connection, factNode, sentenceNode } from '../nodes.js';
import { DateTimeScalar } from '../scalars.js';
import { Article, ArticleConnection, ChangeEventConnection, Fact, Sentence } from '../types.js';

const AS_OF = { nullable: true, description: 'Defaults to now, i.e. the latest snapshot.' };

@Resolver(() => Article)
export class ArticleResolver {
  @Query(() => Article, { nullable: true })
  article(@Arg('id', () => ID) id: string, @Ctx() { loaders }: RequestContext): Promise<Article | null> {
    return loaders.article.load(articleIdOf(id));
  }

  @Query(() => ArticleConnection, { description: 'Articles ordered by id.' })
  async articles(
    @Ctx() { services }: RequestContext,
    @Arg('first', () => Int, { defaultValue: 20 }) first: number,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('titleContains', () => String, { nullable: true }) titleContains: string | null,
  ): Promise<ArticleConnection> {
    const page = await services.reads.articlesPage({
      first: checkPageSize(first),
      afterId: after == null ? null : decodeCursor('article', after),
      titleContains: titleContains ?? null,
    });
    return connection<Article>(page.articles, (article) => encodeCursor('article', article.id), {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: after != null,
      totalCount: page.totalCount,
    });
  }

  @FieldResolver(() => [Sentence], { description: 'The sentences valid at asOf, in order, with their labels.' })
  async sentences(
    @Root() article: Article,
    @Ctx() { loaders, now }: RequestContext,
    @Arg('asOf', () => DateTimeScalar, AS_OF) asOf: Date | null,
  ): Promise<Sentence[]> {
    const at = asOf ?? now;
    const [sentences, snapshots] = await Promise.all([loaders.sentencesValidAt.load({ id: article.id, params: at }), loaders.snapshots()]);
    const snapshot = snapshotInEffect(snapshots, at);
    return sentences.map((sentence, index) => sentenceNode(sentence, index, labelInSnapshot(sentence, snapshot)));
  }

  @FieldResolver(() => [Sentence], {
    description: 'Sentences removed by the snapshot in effect at asOf (label DELETED).',
  })
  async deletedSentences(
    @Root() article: Article,
    @Ctx() { loaders, now }: RequestContext,
    @Arg('asOf', () => DateTimeScalar, AS_OF) asOf: Date | null,
  ): Promise<Sentence[]> {
    const snapshot = snapshotInEffect(await loaders.snapshots(), asOf ?? now);
    if (!snapshot) return [];
    const deleted = await loaders.sentencesDeletedAt.load({ id: article.id, params: snapshot.takenAt });
    return deleted.map((sentence) => sentenceNode(sentence, null, SentenceLabel.DELETED));
  }

  @FieldResolver(() => String, { nullable: true, description: 'The article text at asOf; null before it existed.' })
  async text(
    @Root() article: Article,
    @Ctx() { loaders, now }: RequestContext,
    @Arg('asOf', () => DateTimeScalar, AS_OF) asOf: Date | null,
  ): Promise<string | null> {
    const sentences = await loaders.sentencesValidAt.load({ id: article.id, params: asOf ?? now });
    if (sentences.length === 0) return null;
    return sentences.map((sentence, index) => (index > 0 ? (sentence.startsParagraph ? '\n\n' : ' ') : '') + sentence.text).join('');
  }

  @FieldResolver(() => [Fact], { description: 'Infobox facts valid at asOf, by attribute.' })
  async facts(@Root() article: Article, @Ctx() { loaders, now }: RequestContext, @Arg('asOf', () => DateTimeScalar, AS_OF) asOf: Date | null): Promise<Fact[]> {
    const facts = await loaders.factsValidAt.load({ id: article.id, params: asOf ?? now });
    return facts.map(factNode);
  }

  @FieldResolver(() => ChangeEventConnection, { description: "The article's change events in sequence order." })
  async changes(
    @Root() article: Article,
    @Ctx() { loaders }: RequestContext,
    @Arg('first', () => Int, { defaultValue: 20 }) first: number,
    @Arg('after', () => String, { nullable: true }) after: string | null,
    @Arg('kinds', () => [ChangeKind], { nullable: true }) kinds: ChangeKind[] | null,
  ): Promise<ChangeEventConnection> {
    const limit = checkPageSize(first);
    const afterSeq = after == null ? 0 : decodeSeqCursor(after);
    const page = await loaders.articleChanges.load({ id: article.id, params: { afterSeq, kinds: kinds ?? null, limit: limit + 1 } });
    return changeConnection(page.changes.slice(0, limit), {
      hasNextPage: page.changes.length > limit,
      hasPreviousPage: afterSeq > 0,
      totalCount: page.totalCount,
    });
  }
}
