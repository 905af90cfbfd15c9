/** The answering pipeline's requests and results, as the GraphQL layer and the benchmarks see them. */
import type { FactRecord } from '../domain/model.js';
import type { TimeScope } from './timeScope.js';

/** How `ask` uses retrieval. */
export enum RetrievalMode {
  /** Decide per question (retrieve, answer from the generator alone, or continue with a conversation's evidence). */
  ADAPTIVE = 'ADAPTIVE',
  /** Always retrieve and answer from the top document (the RaLM baseline). */
  ALWAYS = 'ALWAYS',
  /** Never retrieve: what the generator alone says (the vanilla baseline). */
  NEVER = 'NEVER',
  /** Retrieve, answer from the document the certainty gate trusts most (D*), no re-retrieval. */
  GATED = 'GATED',
  /** The gate plus adaptive re-retrieval when its answer is not reliable (RiLM). */
  RILM = 'RILM',
}

export enum DecisionAction {
  RETRIEVE = 'RETRIEVE',
  NO_RETRIEVE = 'NO_RETRIEVE',
  CONTINUE_WITH_EVIDENCE = 'CONTINUE_WITH_EVIDENCE',
}

export enum EvidenceKind {
  PASSAGE = 'PASSAGE',
  SENTENCE = 'SENTENCE',
  FACT = 'FACT',
}

export interface Turn {
  question: string;
  answer?: string | null;
  /** Ids of the evidence an earlier answer was given with (passages, sentences or facts). */
  evidenceIds?: readonly string[] | null;
}

export interface AskRequest {
  question: string;
  asOf?: Date | null;
  conversation?: readonly Turn[] | null;
  retrieval?: RetrievalMode;
  k?: number;
  generator?: string | null;
}

/** A document an answer was drawn from. */
export interface Evidence {
  kind: EvidenceKind;
  id: string;
  articleId: string;
  text: string;
  /** A fact's value (its text reads "subject · attribute: value"); null for passages and sentences. */
  value: string | null;
  validFrom: Date;
  validTo: Date | null;
  /** Native row id of a passage (for excluding it from re-retrieval). */
  rowId: number | null;
  /** Retrieval round that found it (0: the conversation or the knowledge cutoff, 1, 2). */
  round: number;
  rank: number | null;
  denseScore: number | null;
  lexicalScore: number | null;
  fusedScore: number | null;
  /** For a question about a period: the time the text states in the words read, which fits the period. */
  statedTime: StatedTimeSpan | null;
}

/** A time a text states, as written and as an interval (open ends null). */
export interface StatedTimeSpan {
  text: string;
  from: Date | null;
  to: Date | null;
  /** The whole sentence that states it, when the evidence holds only the words it governs. */
  sentence?: string;
}

export interface Certainty {
  reliable: number;
  misleading: number;
  uncertain: number;
}

/** One document's candidate answer and how far the gate trusts it. */
export interface ScoredCandidate {
  evidence: Evidence;
  answer: string;
  generatorConfidence: number;
  certainty: Certainty | null;
}

export interface RetrievalRound {
  round: number;
  query: string;
  /** ARR's ω (0 for the first round). */
  omega: number;
  hits: Evidence[];
}

export interface Decision {
  action: DecisionAction;
  timeSensitive: boolean;
  cues: string[];
  /** Facts about the question's subject that changed between the generator's cutoff and asOf. */
  changedSince: FactRecord[];
}

export interface StageTimings {
  decisionMs: number;
  retrievalMs: number;
  generationMs: number;
  gateMs: number;
  reRetrievalMs: number;
  totalMs: number;
}

/** One answer of a question about a period, with the part of the period it held. */
export interface ScopedAnswer {
  text: string;
  adopted: boolean;
  certainty: Certainty | null;
  /** From when and until when (exclusive) in the question's time scope this answer was given. */
  from: Date;
  to: Date;
  evidence: Evidence | null;
}

export interface AnswerResult {
  question: string;
  /** The adopted answer; null when ChronoQL abstains (no candidate is trusted enough). */
  text: string | null;
  /** The best candidate answer, adopted or not; null when there is none. */
  guess: string | null;
  adopted: boolean;
  certainty: Certainty | null;
  decision: Decision;
  /** The candidates considered, the chosen one first. */
  candidates: ScoredCandidate[];
  rounds: RetrievalRound[];
  asOf: Date;
  /** The time the question's own words ask about; null when it names none. */
  timeScope: TimeScope | null;
  /** For a question about a period, the other answers that held in it. */
  otherAnswers: ScopedAnswer[];
  generator: string;
  timings: StageTimings;
}
