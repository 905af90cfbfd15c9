/**
 * The shape of what one snapshot writes for one article: ingest plans it (ingest/articlePlan.ts),
 * storage writes it in one transaction (graph/ingestRepository.ts).
 */
import type { ChangeKind, EventTime, FactChangeKind, SentenceRecord } from './model.js';

/** A sentence version valid in the article's previous snapshot, in document order. */
export interface PreviousSentence {
  id: string;
  text: string;
  startsParagraph: boolean;
}

/** An infobox fact valid in the article's previous snapshot. */
export interface PreviousFact {
  id: string;
  attribute: string;
  value: string;
}

/** What the graph holds for an article just before a snapshot is applied. */
export interface ArticleState {
  id: string;
  exists: boolean;
  title: string | null;
  /** Valid sentences in document order. */
  sentences: Array<PreviousSentence & { orderKey: string }>;
  facts: PreviousFact[];
  /** Valid passages (retrieval units) of the article. */
  passages: Array<{ id: string; text: string }>;
}

export interface NewPassageVersion {
  id: string;
  articleId: string;
  text: string;
  eventTimes: EventTime[];
}

/** A sentence version to create; valid and transaction time are set when it is written. */
export type NewSentenceVersion = Omit<SentenceRecord, 'validFrom' | 'validTo' | 'recordedAt'>;

export interface NewFactVersion {
  id: string;
  subject: string;
  attribute: string;
  attributeKey: string;
  value: string;
  change: FactChangeKind | null;
  /** For an updated list value, its members added and removed. */
  addedMembers: string[];
  removedMembers: string[];
  eventTimes: EventTime[];
}

export interface PlannedChange {
  kind: ChangeKind;
  articleId: string;
  sentenceId: string | null;
  previousSentenceId: string | null;
  factId: string | null;
  previousFactId: string | null;
}

/** Everything one snapshot does to one article; written in a single transaction with its batch. */
export interface ArticlePlan {
  articleId: string;
  title: string;
  isNewArticle: boolean;
  /** Sentences in this snapshot of the article. */
  sentenceCount: number;
  createSentences: NewSentenceVersion[];
  closeSentenceIds: string[];
  /** previous → new version links (REVISED_AS). */
  sentenceRevisions: Array<{ from: string; to: string }>;
  createFacts: NewFactVersion[];
  closeFactIds: string[];
  factSupersessions: Array<{ from: string; to: string }>;
  createPassages: NewPassageVersion[];
  closePassageIds: string[];
  changes: PlannedChange[];
}
