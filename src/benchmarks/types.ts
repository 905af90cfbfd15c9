/**
 * The living benchmark's shapes (GrowOVER-QA, GrowOVER-DIALOGUE, DynaQuest): what generators
 * draft from evidence sentences, and what the store keeps as versioned items.
 */

import type { BenchmarkItemType } from '../domain/model.js';

export type { BenchmarkItemType, BenchmarkKind } from '../domain/model.js';

/** A sentence a generator may draft from; `previousText` is the version it replaced, for a CHANGED sentence. */
export interface EvidenceSentence {
  text: string;
  previousText?: string | null;
}

export interface GenerationInput {
  /** The article's title, which a question may name to be answerable without the context. */
  title: string;
  sentences: readonly EvidenceSentence[];
  type: BenchmarkItemType;
}

/** A question drafted from evidence, before the round-trip filter and storage. */
export interface DraftQuestion {
  question: string;
  /** Acceptable answers, the canonical one first; each is a span of the evidence. */
  answers: string[];
  /** For a question drafted from a CHANGED sentence: the answer its previous version gave. */
  previousAnswers: string[];
  /** Indices into the input's sentences that the answer rests on. */
  evidence: number[];
  /** A wh-question made from a sentence, a cloze with a blank, or a chat model's question. */
  form: 'wh' | 'cloze' | 'chat';
}

/** Drafts questions from evidence sentences; candidates best first, possibly none. */
export interface QuestionGenerator {
  readonly name: string;
  questions(input: GenerationInput): Promise<DraftQuestion[]>;
}

export interface DraftDialogueTurn {
  user: string;
  expert: string;
  /** The index of the input sentence the expert's reply rests on. */
  evidence: number;
}

/** A user/expert dialogue of 3–4 turns drafted from a paragraph (GrowOVER-DIALOGUE). */
export interface DraftDialogue {
  turns: DraftDialogueTurn[];
}

export interface DialogueGenerator {
  readonly name: string;
  dialogues(input: GenerationInput): Promise<DraftDialogue[]>;
}
