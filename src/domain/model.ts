/** The temporal data model as repositories hand it out (ARCHITECTURE.md, "The time model"; README.md, "How it works"). */

export enum SentenceLabel {
  UNCHANGED = 'UNCHANGED',
  CHANGED = 'CHANGED',
  NEW = 'NEW',
  DELETED = 'DELETED',
}

/** How a fact version came to be, relative to the article's previous snapshot. */
export enum FactChangeKind {
  NEW = 'NEW',
  UPDATED = 'UPDATED',
  /** A false change (typo, diacritics, abbreviation, qualifier): the same fact, reworded. */
  REFINED = 'REFINED',
}

export enum ChangeKind {
  ARTICLE_ADDED = 'ARTICLE_ADDED',
  ARTICLE_REMOVED = 'ARTICLE_REMOVED',
  SENTENCE_NEW = 'SENTENCE_NEW',
  SENTENCE_CHANGED = 'SENTENCE_CHANGED',
  SENTENCE_DELETED = 'SENTENCE_DELETED',
  FACT_NEW = 'FACT_NEW',
  FACT_UPDATED = 'FACT_UPDATED',
  FACT_REFINED = 'FACT_REFINED',
  FACT_REMOVED = 'FACT_REMOVED',
}

export enum SnapshotStatus {
  INGESTING = 'INGESTING',
  COMPLETE = 'COMPLETE',
}

export interface SnapshotRecord {
  id: string;
  takenAt: Date;
  recordedAt: Date;
  source: string;
  status: SnapshotStatus;
  complete: boolean;
  contentHash: string;
  articleCount: number;
  changeCount: number;
}

export interface ArticleRecord {
  id: string;
  title: string;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
}

export interface SentenceRecord {
  id: string;
  articleId: string;
  text: string;
  orderKey: string;
  startsParagraph: boolean;
  /** Its label in the snapshot that created it; null in the article's first snapshot. */
  origin: SentenceLabel | null;
  /** For a NEW sentence, false when GrowOVER's rules left its label uncertain; null otherwise. */
  confident: boolean | null;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
}

export interface FactRecord {
  id: string;
  subject: string;
  attribute: string;
  value: string;
  change: FactChangeKind | null;
  /** For an updated list value, the members it gained and lost. */
  addedMembers: string[];
  removedMembers: string[];
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
}

export interface ChangeEventRecord {
  seq: number;
  kind: ChangeKind;
  snapshotId: string;
  articleId: string;
  at: Date;
  recordedAt: Date;
  sentenceId: string | null;
  previousSentenceId: string | null;
  factId: string | null;
  previousFactId: string | null;
}
