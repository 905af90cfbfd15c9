import 'reflect-metadata';
/** GraphQL types of the answering API (`ask`, `batchAsk`). */
import { Field, Float, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TimeScopeKind } from '../qa/timeScope.js';
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
registerEnumType(TimeScopeKind, {
  name: 'TimeScopeKind',
  description:
    'AT an instant; DURING a period (the answer that held longest first); BEFORE a time (the last answer before it); AFTER a period (the first answer after it); ' +
    'SINCE a time (the latest answer); CURRENT (asOf itself); PREVIOUS (the value before the one that holds at asOf, or before a named one); NEXT (the value after a named one); ' +
    'WHEN the time the text gives for another event ("when Paris hosted the Olympics"), answered as DURING; FIRST the earliest value ("the first prime minister"), LAST the latest up to asOf.',
});

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

@ObjectType({ description: "A time the words of a question's evidence state (event time), which fits the period the question asks about." })
export class StatedTime {
  @Field(() => DateTimeScalar, { nullable: true, description: 'Start (inclusive); null when open.' }) from!: Date | null;
  @Field(() => DateTimeScalar, { nullable: true, description: 'End (exclusive); null when open.' }) to!: Date | null;
  @Field(() => String, { description: 'The words it was read from, as written ("since 5 September 2024").' }) text!: string;
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
  @Field(() => StatedTime, {
    nullable: true,
    description: 'For a question about a period read in the text: the time these words state (they are the words it governs, without it). null otherwise.',
  })
  statedTime!: StatedTime | null;
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

@ObjectType({ description: "The time a question's own words ask about, read from it." })
export class TimeScope {
  @Field(() => TimeScopeKind) kind!: TimeScopeKind;
  @Field(() => String, { description: 'The words read, as written.' }) text!: string;
  @Field(() => DateTimeScalar, { nullable: true, description: 'Start (inclusive); null when open.' }) from!: Date | null;
  @Field(() => DateTimeScalar, { nullable: true, description: 'End (exclusive); null when open (up to asOf).' }) to!: Date | null;
}

@ObjectType({ description: 'Another answer of a question about a period, with the part of the period it held.' })
export class ScopedAnswer {
  @Field(() => String) text!: string;
  @Field(() => Boolean) adopted!: boolean;
  @Field(() => Certainty, { nullable: true }) certainty!: Certainty | null;
  @Field(() => DateTimeScalar) from!: Date;
  @Field(() => DateTimeScalar) to!: Date;
  @Field(() => Evidence, { nullable: true }) evidence!: Evidence | null;
}

@ObjectType({ description: 'An answer as of a date, with its evidence, certainty and the decisions behind it.' })
export class Answer {
  @Field(() => String) question!: string;
  @Field(() => String, {
    nullable: true,
    description: 'The adopted answer. null when ChronoQL abstains: no candidate is trusted enough (guess holds the best one, decision.cues says why).',
  })
  text!: string | null;
  @Field(() => String, { nullable: true, description: 'The best candidate answer, adopted or not; null when there is none.' }) guess!: string | null;
  @Field(() => Boolean, {
    description:
      'The certainty gate trusts the answer: its calibrated p(reliable) reaches the adoption threshold, at which at least 95 % of adopted answers were right on held-out questions.',
  })
  adopted!: boolean;
  @Field(() => Certainty, { nullable: true, description: 'null when no gate ran (NEVER, or the generator alone without a fact to weigh).' })
  certainty!: Certainty | null;
  @Field(() => RetrievalDecision) decision!: RetrievalDecision;
  @Field(() => [Evidence], { description: 'The chosen answer’s evidence first, then the other documents considered.' }) evidence!: Evidence[];
  @Field(() => [AnswerCandidate]) candidates!: AnswerCandidate[];
  @Field(() => [RetrievalRound]) rounds!: RetrievalRound[];
  @Field(() => DateTimeScalar) asOf!: Date;
  @Field(() => TimeScope, { nullable: true, description: 'The time the question itself names ("in July 2024", "before 2020", "currently"); null when none.' })
  timeScope!: TimeScope | null;
  @Field(() => [ScopedAnswer], { description: 'For a question about a period: the other answers that held in it.' }) otherAnswers!: ScopedAnswer[];
  @Field(() => String) generator!: string;
  @Field(() => AnswerTimings) timings!: AnswerTimings;
}
