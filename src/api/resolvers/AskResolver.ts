import 'reflect-metadata';
import { Arg, Ctx, FieldResolver, Int, Query, Resolver, Root } from 'type-graphql';
import { AskInputError } from '../../qa/askService.js';
import { GraphQLError } from 'graphql';
import { GeneratorRequestError } from '../../qa/generators/index.js';
import { RetrievalMode, type AnswerResult, type AskRequest } from '../../qa/types.js';
import { Answer, AskInput, Evidence, TurnInput } from '../answerTypes.js';
import type { RequestContext } from '../context.js';
import { badUserInput } from '../errors.js';
import { factNode } from '../nodes.js';
import { DateTimeScalar } from '../scalars.js';
import { Article } from '../types.js';

function toAnswer(result: AnswerResult): Answer {
  return {
    ...result,
    decision: { ...result.decision, changedSince: result.decision.changedSince.map(factNode) },
    evidence: result.candidates.map((candidate) => candidate.evidence),
  };
}

async function answering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AskInputError) throw badUserInput(error.message, error.argument);
    if (error instanceof GeneratorRequestError) throw new GraphQLError(error.message, { extensions: { code: error.code } });
    throw error;
  }
}

@Resolver(() => Answer)
export class AskResolver {
  @Query(() => Answer, {
    description: 'Answers a question as of a date, deciding whether to retrieve, gating the answer by certainty and re-retrieving when unsure.',
  })
  ask(
    @Ctx() { services, now }: RequestContext,
    @Arg('question', () => String) question: string,
    @Arg('asOf', () => DateTimeScalar, { nullable: true, description: 'Defaults to now.' }) asOf: Date | null,
    @Arg('conversation', () => [TurnInput], { nullable: true }) conversation: TurnInput[] | null,
    @Arg('retrieval', () => RetrievalMode, { defaultValue: RetrievalMode.ADAPTIVE }) retrieval: RetrievalMode,
    @Arg('k', () => Int, { defaultValue: 3, description: 'Documents per retrieval round (1–50).' }) k: number,
    @Arg('generator', () => String, { nullable: true }) generator: string | null,
  ): Promise<Answer> {
    return answering(async () => toAnswer(await services.answering.ask({ question, asOf, conversation, retrieval, k, generator }, now)));
  }

  @Query(() => [Answer], { description: 'Many questions at once (one search, one generator call and one gate call per round); answers in input order.' })
  batchAsk(@Ctx() { services, now }: RequestContext, @Arg('questions', () => [AskInput]) questions: AskInput[]): Promise<Answer[]> {
    return answering(async () => (await services.answering.batchAsk(questions as AskRequest[], now)).map(toAnswer));
  }
}

@Resolver(() => Evidence)
export class EvidenceResolver {
  @FieldResolver(() => Article, { nullable: true, description: 'The article the evidence belongs to.' })
  article(@Root() evidence: Evidence, @Ctx() { loaders }: RequestContext): Promise<Article | null> {
    return loaders.article.load(evidence.articleId);
  }
}
