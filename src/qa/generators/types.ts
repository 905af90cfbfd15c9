import type { QuestionAnalysis } from '../question.js';
import type { Evidence } from '../types.js';

export interface GenerationInput {
  question: QuestionAnalysis;
  /** The document to answer from; null asks the generator alone (closed book). */
  evidence: Evidence | null;
  /**
   * What a closed-book local generator knows: the fact as it stood at the knowledge cutoff.
   * A language model has its own knowledge and ignores it.
   */
  memory?: Evidence | null;
}

export interface Generation {
  /** At most 10 tokens; empty when the generator has no answer. */
  answer: string;
  /** The generator's own confidence in [0, 1] (extractive: span probability; LLM: mean token probability). */
  confidence: number;
  /** The reader's unnormalised span score, comparable across documents (null for facts and other generators). */
  score: number | null;
}

/** Answers a question from one document (or from its own knowledge); one call answers a batch. */
export interface Generator {
  readonly name: string;
  generate(inputs: readonly GenerationInput[]): Promise<Generation[]>;
}

export class GeneratorConfigError extends Error {}

export class GeneratorRequestError extends Error {
  readonly code = 'GENERATOR_FAILED';
}
