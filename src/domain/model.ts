/** The temporal data model as repositories hand it out (ARCHITECTURE.md, "The time model"; README.md, "How it works"). */

/**
 * An article id as stored: trimmed, in Unicode NFC, so the composed and decomposed spellings of
 * "Café" name one article whether it is written or looked up.
 */
export function articleIdOf(text: string): string {
  return text.trim().normalize('NFC');
}

/**
 * A character that does not show: a control (Cc), a format character (Cf: zero-width spaces and
 * joiners, direction marks and overrides, the byte-order mark, the soft hyphen, tags), a line or
 * paragraph separator, or another of Unicode's default-ignorable code points (variation
 * selectors, Hangul fillers, the combining grapheme joiner). A name with one looks like another
 * name and is not it.
 */
export const INVISIBLE_CHARACTER = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

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
  /** Its ingest was rolled back (nothing of it is stored) or stopped part-way (what it wrote is kept, to resume). */
  FAILED = 'FAILED',
}

/** Why a snapshot's ingest failed: a stable code and what to do about it. */
export interface SnapshotFailure {
  code: string;
  message: string;
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
  /** When it became COMPLETE. */
  completedAt: Date | null;
  /** Set when it FAILED. */
  failure: SnapshotFailure | null;
}

export interface ArticleRecord {
  id: string;
  title: string;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
}

/**
 * A time a version's text states about when something held (event time), as read when the version
 * was written: a half-open interval at the granularity the text states, a null bound open
 * ("since 2019" has no end), with the words it was read from and their offsets in the version's
 * text. Beside valid time (when a snapshot said it) and transaction time (when ChronoQL recorded it).
 */
export interface EventTime {
  from: Date | null;
  to: Date | null;
  text: string;
  start: number;
  end: number;
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
  /** The times its text states; empty for a version written before event times were read, until `chronoql event-times` reads them. */
  eventTimes: EventTime[];
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
  /** When the value held, from the value itself ("Real Madrid (2004–2009)") or its term's start and end attributes. */
  eventTimes: EventTime[];
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

/** A benchmark item's type at a snapshot (GrowOVER): its evidence is new, changed, or carried over. */
export type BenchmarkItemType = 'NEW' | 'CHANGED' | 'UNCHANGED';

/**
 * Where a benchmark item comes from: a question from sentences (GrowOVER-QA), a question from
 * an infobox fact (DynaQuest's templates), one turn of a dialogue (GrowOVER-DIALOGUE), or a
 * public set imported with its contexts.
 */
export type BenchmarkKind = 'TEXT_QA' | 'FACT_QA' | 'DIALOGUE_TURN' | 'IMPORTED';

/** One version of a benchmark item: valid from the snapshot that made or remapped it until the one that retired it. */
export interface BenchmarkItemRecord {
  /** This version's id. */
  id: string;
  /** The item's id, shared by all its versions. */
  itemId: string;
  kind: BenchmarkKind;
  /** Its type at the snapshot this version began: NEW or CHANGED when generated, UNCHANGED when remapped. */
  origin: BenchmarkItemType;
  question: string;
  answers: string[];
  previousAnswers: string[];
  articleId: string | null;
  /** For a dialogue turn: its dialogue and its position (0-based); the turns before it are the conversation. */
  dialogueId: string | null;
  turn: number | null;
  /** The generator that drafted it, or the public set it was imported from. */
  source: string;
  /** The evidence the answer rests on, in order: sentence or fact versions valid with this version. */
  evidence: Array<{ id: string; text: string }>;
  /** For an imported item: the contexts it came with. */
  contexts: Array<{ title: string; text: string }>;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
}
