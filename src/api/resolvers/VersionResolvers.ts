import 'reflect-metadata';
import { Arg, Ctx, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import { articleIdOf } from '../../domain/model.js';
import { attributeKey } from '../../ingest/factDiff.js';
import type { RequestContext } from '../context.js';
import { factNode, linkedVersion, sentenceNode } from '../nodes.js';
import { DateTimeScalar } from '../scalars.js';
import { Article, Fact, Sentence } from '../types.js';

@Resolver(() => Sentence)
export class SentenceResolver {
  @Query(() => Sentence, { nullable: true, description: 'One sentence version by id.' })
  async sentence(@Arg('id', () => ID) id: string, @Ctx() { loaders }: RequestContext): Promise<Sentence | null> {
    const record = await loaders.sentence.load(id);
    return record && sentenceNode(record);
  }

  @FieldResolver(() => Sentence, { nullable: true, description: 'The version this one revised (for CHANGED sentences).' })
  async previous(@Root() sentence: Sentence, @Ctx() { loaders }: RequestContext): Promise<Sentence | null> {
    return linkedVersion(loaders.previousSentenceId, loaders.sentence, sentence.id, (record) => sentenceNode(record));
  }

  @FieldResolver(() => Sentence, { nullable: true, description: 'The version that revised this one.' })
  async next(@Root() sentence: Sentence, @Ctx() { loaders }: RequestContext): Promise<Sentence | null> {
    return linkedVersion(loaders.nextSentenceId, loaders.sentence, sentence.id, (record) => sentenceNode(record));
  }

  @FieldResolver(() => Article)
  async article(@Root() sentence: Sentence, @Ctx() { loaders }: RequestContext): Promise<Article> {
    return (await loaders.article.load(sentence.articleId))!;
  }
}

@Resolver(() => Fact)
export class FactResolver {
  @Query(() => Fact, { nullable: true, description: 'The value of an attribute of an article as of a date.' })
  async fact(
    @Ctx() { services, now }: RequestContext,
    @Arg('subject', () => ID, { description: 'The article id.' }) subject: string,
    @Arg('attribute', () => String, { description: 'Matched ignoring case and spacing.' }) attribute: string,
    @Arg('asOf', () => DateTimeScalar, { nullable: true, description: 'Defaults to now.' }) asOf: Date | null,
  ): Promise<Fact | null> {
    const record = await services.reads.factValidAt(articleIdOf(subject), attributeKey(attribute), asOf ?? now);
    return record && factNode(record);
  }

  @Query(() => [Fact], { description: 'Every version of an attribute of an article, oldest first.' })
  async factHistory(
    @Ctx() { services }: RequestContext,
    @Arg('subject', () => ID) subject: string,
    @Arg('attribute', () => String) attribute: string,
  ): Promise<Fact[]> {
    return (await services.reads.factHistory(articleIdOf(subject), attributeKey(attribute))).map(factNode);
  }

  @FieldResolver(() => Fact, { nullable: true, description: 'The version this one superseded.' })
  async previous(@Root() fact: Fact, @Ctx() { loaders }: RequestContext): Promise<Fact | null> {
    return linkedVersion(loaders.previousFactId, loaders.fact, fact.id, factNode);
  }

  @FieldResolver(() => Fact, { nullable: true, description: 'The version that superseded this one.' })
  async next(@Root() fact: Fact, @Ctx() { loaders }: RequestContext): Promise<Fact | null> {
    return linkedVersion(loaders.nextFactId, loaders.fact, fact.id, factNode);
  }

  @FieldResolver(() => Article)
  async article(@Root() fact: Fact, @Ctx() { loaders }: RequestContext): Promise<Article> {
    return (await loaders.article.load(fact.subject))!;
  }
}
