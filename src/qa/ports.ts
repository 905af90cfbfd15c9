/**
 * What answering needs from the rest of ChronoQL, as narrow interfaces owned here: the graph's
 * facts and change profiles, passage search, the question encoder, the generators and the
 * certainty gate. The composition root (app/runtime.ts) hands in the real ones (repositories of
 * graph/, the retrieval service, the reader); test/support/answeringFakes.ts has in-memory ones,
 * so each stage of `ask` can be checked in milliseconds.
 */
import type { FactRecord, SentenceRecord, SnapshotRecord } from '../domain/model.js';
import type { ChangeProfile } from '../graph/answeringRepository.js';
import type { UnitRecord } from '../graph/retrievalRepository.js';
import type { ReRetrievalRequest } from '../retrieval/denseRetriever.js';
import type { SearchHit, SearchOptions, SearchUnit } from '../retrieval/retriever.js';
import type { Generator } from './generators/types.js';
import type { QuestionAnalysis } from './question.js';
import type { TimeReader } from './textTime.js';
import type { Certainty, Evidence } from './types.js';

/** The graph's knowledge of articles and facts. */
export interface FactSource {
  /** Every snapshot, oldest first. */
  snapshots(): Promise<SnapshotRecord[]>;
  articleTitles(): Promise<Array<{ id: string; title: string }>>;
  /** Every attribute name any fact of the store has had. */
  attributeNames(): Promise<string[]>;
  /** Whether some article has had facts of both attributes. */
  attributesHeldTogether(first: string, second: string): Promise<boolean>;
  /** Every version of every fact of these articles, by article id. */
  factVersions(articleIds: readonly string[]): Promise<Map<string, FactRecord[]>>;
  /** The version a fact version superseded. */
  previousFact(factId: string): Promise<FactRecord | null>;
  /** What changed in these articles within `window`, and how volatile they are up to `asOf`. */
  changeProfiles(articleIds: readonly string[], window: { from: Date; to: Date }, asOf: Date): Promise<Map<string, ChangeProfile>>;
  factsByIds(ids: readonly string[]): Promise<Map<string, FactRecord>>;
  sentencesByIds(ids: readonly string[]): Promise<Map<string, SentenceRecord>>;
}

/** Passages and sentences valid at a date. */
export interface PassageSearch {
  /** The encoder the dense side searches with: a question vector of the same encoder can stand for the query. */
  readonly embedderId: string;
  batchSearch(queries: readonly string[], options: SearchOptions): Promise<SearchHit[][]>;
  /** GrowOVER's adaptive re-retrieval, first-round passages excluded. */
  reRetrieve(requests: readonly ReRetrievalRequest[], asOf: Date, k: number): Promise<SearchHit[][]>;
  /** The names no passage of the store mentions. */
  namesNeverMentioned(names: readonly string[]): Promise<string[]>;
  unitsByIds(unit: SearchUnit, ids: readonly string[]): Promise<Map<string, UnitRecord>>;
  /** Every version of these articles' units that the store knew as of `asOf`, current or not: the text a question about a period reads. */
  unitsKnownAsOf(unit: SearchUnit, articleIds: readonly string[], asOf: Date, limit: number): Promise<UnitRecord[]>;
}

/** Sentence vectors of questions and short texts, from the reader's encoder. */
export interface QuestionEncoder {
  readonly encoderId: string;
  readonly dimension: number;
  questionVectors(questions: readonly QuestionAnalysis[]): Promise<Float32Array[]>;
  embedQueries(texts: readonly string[]): Promise<Float32Array>;
}

export interface GeneratorSource {
  /** The named generator (the default when none is named); throws when it is not configured. */
  get(name: string | null | undefined): Generator;
}

/** GrowOVER's certainty classifier over a candidate's features, and when an answer is adopted. */
export interface Gate {
  /** ARR's λ: ω = λ · p(reliable). */
  readonly lambda: number;
  score(rows: readonly number[][]): Promise<Certainty[]>;
  /** The p(reliable) from which answers from this kind of evidence are adopted. */
  threshold(evidence: Evidence): number;
  adopts(evidence: Evidence, certainty: Certainty | null): boolean;
}

export interface AnsweringPorts {
  facts: FactSource;
  search: PassageSearch;
  encoder: QuestionEncoder;
  generators: GeneratorSource;
  /** Null runs without a gate (to collect training features): every candidate then has certainty null and none is adopted. */
  gate: Gate | null;
  /** The gate of a period's readings in the text (readingGate.ts); without one, the certainty gate weighs them. */
  readingGate?: Gate | null;
  /** The generator's knowledge cutoff; default the earliest snapshot's date. */
  cutoff?: Date | null;
  /** Whether the asked fact joins the retrieved passages as a candidate (default true; false measures the text path alone). */
  factCandidates?: boolean;
  /** Reads the times a text states; without it, a question about a period is answered by the snapshot clock alone. */
  timesIn?: TimeReader;
}
