/**
 * The one shape every retriever has (FAISS's Index idea): given a batch of queries and where to
 * look (a unit kind, an instant, how many), each query's units valid at that instant, best first.
 * The native dense index, Neo4j's vector index and Lucene implement it; fusion composes two of them.
 */
import type { Period } from '../domain/time.js';
import type { ScoredUnit, UnitLabel, UnitRecord } from '../graph/retrievalRepository.js';

export enum SearchMode {
  HYBRID = 'HYBRID',
  DENSE = 'DENSE',
  LEXICAL = 'LEXICAL',
  NEO4J_VECTOR = 'NEO4J_VECTOR',
}

export enum SearchUnit {
  PASSAGE = 'PASSAGE',
  SENTENCE = 'SENTENCE',
}

export const UNIT_LABEL: Record<SearchUnit, UnitLabel> = { PASSAGE: 'Passage', SENTENCE: 'Sentence' };

export interface SearchOptions {
  asOf: Date;
  k: number;
  mode: SearchMode;
  unit: SearchUnit;
  /** Keep only units whose text speaks of this period (event time); null or absent: any. */
  during?: Period | null;
  /**
   * The queries' vectors where the caller already has them from this store's embedder (the
   * reader encodes each question with the same model): one encoder pass per question, not two.
   * A null entry is embedded here.
   */
  queryVectors?: ReadonlyArray<Float32Array | null>;
}

export interface SearchHit extends UnitRecord {
  unit: SearchUnit;
  rank: number;
  score: number;
  denseScore: number | null;
  denseRank: number | null;
  lexicalScore: number | null;
  lexicalRank: number | null;
}

export interface RetrievalQuery {
  text: string;
  /** E(text) from the store's embedder, when the caller has it. */
  vector?: Float32Array | null;
}

export interface RetrieveOptions {
  asOf: Date;
  /** Units wanted per query. */
  k: number;
  unit: SearchUnit;
}

/** What one query's search produced: the final order, and each underlying retriever's own list for its scores and ranks. */
export interface RankedUnits {
  ranking: ScoredUnit[];
  dense?: ScoredUnit[];
  lexical?: ScoredUnit[];
}

export interface Retriever {
  search(queries: readonly RetrievalQuery[], options: RetrieveOptions): Promise<RankedUnits[]>;
}

/** Only the first words of a query are searched: a megabyte of text must not reach Lucene or the encoder. */
export const MAX_QUERY_TERMS = 64;
/**
 * Lucene refuses a query of more than 1,024 clauses, and its analyzer splits one long "word" at
 * punctuation and every 255 characters: 1,000 characters make at most about 500 tokens.
 */
const MAX_QUERY_CHARS = 1_000;

/** The first MAX_QUERY_TERMS whitespace-separated words of a query, at most MAX_QUERY_CHARS long. */
export function queryTerms(query: string): string {
  return query
    .split(/\s+/, MAX_QUERY_TERMS + 1)
    .slice(0, MAX_QUERY_TERMS)
    .join(' ')
    .slice(0, MAX_QUERY_CHARS);
}

/** One query's ranked units as search hits, with each retriever's own score and rank beside the final ones. */
export function toSearchHits({ ranking, dense, lexical }: RankedUnits, unit: SearchUnit, k: number): SearchHit[] {
  const denseRanks = rankOf(dense);
  const lexicalRanks = rankOf(lexical);
  return ranking.slice(0, k).map(({ score, ...record }, position) => ({
    ...record,
    unit,
    rank: position + 1,
    score,
    denseScore: denseRanks.get(record.id)?.score ?? null,
    denseRank: denseRanks.get(record.id)?.rank ?? null,
    lexicalScore: lexicalRanks.get(record.id)?.score ?? null,
    lexicalRank: lexicalRanks.get(record.id)?.rank ?? null,
  }));
}

function rankOf(ranking: readonly ScoredUnit[] | undefined): Map<string, { rank: number; score: number }> {
  return new Map((ranking ?? []).map((hit, index) => [hit.id, { rank: index + 1, score: hit.score }]));
}
