/** GraphQL types of the answering API (`ask`, `batchAsk`). */
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DecisionAction, EvidenceKind, RetrievalMode } from '../qa/types.js';
import { DateTimeScalar } from './scalars.js';
import { Fact } from './types.js';

registerEnumType(RetrievalMode, {
  name: 'RetrievalMode',
  description:
    'ADAPTIVE decides per question; ALWAYS retrieves and answers from the top passage (RaLM); NEVER answers without retrieval; ' +
    'GATED answers from the document the certainty gate trusts most (D*); RILM adds adaptive re-retrieval when that answer is not reliable.',
});
registerEnumType(DecisionAction, { name: 'DecisionAction', description: 'What the retrieval decision chose.' });
registerEnumType(EvidenceKind, { name: 'EvidenceKind' });

@InputType({ description: 'An earlier turn of a conversation.' })
export class TurnInput {
  @Field(() => String)
  question!: string;

  @Field(() => String, { nullable: true })
  answer?: string | null;

  @Field(() => [ID], { nullable: true, description: "Ids of the earlier answer's evidence (Evidence.id), so a follow-up can continue with it." })
  evidenceIds?: string[] | null;
}

@InputType({ description: 'One question of a batchAsk, with the same arguments as ask.' })
export class AskInput {
  @Field(() => String)
  question!: string;

  @Field(() => DateTimeScalar, { nullable: true, description: 'Defaults to now.' })
  asOf?: Date | null;

  @Field(() => [TurnInput], { nullable: true })
  conversation?: TurnInput[] | null;

  @Field(() => RetrievalMode, { defaultValue: RetrievalMode.ADAPTIVE })
  retrieval!: RetrievalMode;

  @Field(() => Int, { defaultValue: 3 })
  k!: number;

  @Field(() => String, { nullable: true, description: "'extractive' (default) or 'openai' when configured." })
  generator?: string | null;
}

@ObjectType({ description: 'How far the certainty gate trusts an answer (class probabilities).' })
export class Certainty {
  @Field(() => Float) reliable!: number;
  @Field(() => Float) misleading!: number;
  @Field(() => Float) uncertain!: number;
}

@ObjectType({ description: 'Whether and why the question was answered with retrieval.' })
export class RetrievalDecision {
  @Field(() => DecisionAction)
  action!: DecisionAction;

  @Field(() => Boolean, { description: 'The answer depends on when the question is asked.' })
  timeSensitive!: boolean;

  @Field(() => [String], { description: 'Every reason behind the decision.' })
  cues!: string[];

  @Field(() => [Fact], { description: "Facts about the question's subjects that changed between the generator's knowledge cutoff and asOf." })
  changedSince!: Fact[];
}

@ObjectType({ description: 'A passage, sentence or fact an answer was drawn from, valid at asOf.' })
export class Evidence {
  @Field(() => EvidenceKind) kind!: EvidenceKind;
  @Field(() => ID) id!: string;
  @Field(() => ID) articleId!: string;
  @Field(() => String) text!: string;
  @Field(() => DateTimeScalar) validFrom!: Date;
  @Field(() => DateTimeScalar, { nullable: true }) validTo!: Date | null;
  @Field(() => Int, { description: '0: from the conversation or the knowledge cutoff; 1: first retrieval; 2: re-retrieval.' }) round!: number;
  @Field(() => Int, { nullable: true }) rank!: number | null;
  @Field(() => Float, { nullable: true }) denseScore!: number | null;
  @Field(() => Float, { nullable: true }) lexicalScore!: number | null;
  @Field(() => Float, { nullable: true, description: 'The hybrid (or, in round 2, ARR) score.' }) fusedScore!: number | null;
}

@ObjectType({ description: "One document's candidate answer." })
export class AnswerCandidate {
  @Field(() => Evidence) evidence!: Evidence;
  @Field(() => String) answer!: string;
  @Field(() => Float, { description: "The generator's own confidence (span probability or mean token probability)." }) generatorConfidence!: number;
  @Field(() => Certainty, { nullable: true }) certainty!: Certainty | null;
}

@ObjectType({ description: 'One retrieval round.' })
export class RetrievalRound {
  @Field(() => Int) round!: number;
  @Field(() => String) query!: string;
  @Field(() => Float, { description: 'ARR weight of the answer-augmented query (0 in round 1).' }) omega!: number;
  @Field(() => [Evidence]) hits!: Evidence[];
}

@ObjectType({ description: 'Milliseconds per stage (for batchAsk, of the whole batch).' })
export class AnswerTimings {
  @Field(() => Float) decisionMs!: number;
  @Field(() => Float) retrievalMs!: number;
  @Field(() => Float) generationMs!: number;
  @Field(() => Float) gateMs!: number;
  @Field(() => Float) reRetrievalMs!: number;
  @Field(() => Float) totalMs!: number;
}

@ObjectType({ description: 'An answer as of a date, with its evidence, certainty and the decisions behind it.' })
export class Answer {
  @Field(() => String) question!: string;
  @Field(() => String, { description: 'Empty when no answer was found.' }) text!: string;
  @Field(() => Boolean, { description: 'The certainty gate predicted "reliable" for the chosen answer.' }) adopted!: boolean;
  @Field(() => Certainty, { nullable: true, description: 'null when no gate ran (NEVER, NO_RETRIEVE).' }) certainty!: Certainty | null;
  @Field(() => RetrievalDecision) decision!: RetrievalDecision;
  @Field(() => [Evidence], { description: 'The chosen answer’s evidence first, then the other documents considered.' }) evidence!: Evidence[];
  @Field(() => [AnswerCandidate]) candidates!: AnswerCandidate[];
  @Field(() => [RetrievalRound]) rounds!: RetrievalRound[];
  @Field(() => DateTimeScalar) asOf!: Date;
  @Field(() => String) generator!: string;
  @Field(() => AnswerTimings) timings!: AnswerTimings;
}
