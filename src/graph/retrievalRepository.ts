import { int, type CypherRunner } from './database.js';
import { fromNeo4jDateTime, requireDate, toNeo4jDateTime } from './temporal.js';
import { deepenUntilEnoughValid } from '../domain/time.js';
import { currentVersionCypher, knownAsOfCypher, validAtCypher, validAtLucene } from './validity.js';
import type { EventTime } from '../domain/model.js';
import { EVENT_TIME_FIELDS, eventTimesOf } from './eventTimeProperties.js';

/** The node kinds that are retrieval units, each with its own vector index and row counter. */
export type UnitLabel = 'Passage' | 'Sentence';

const ROW_COUNTER: Record<UnitLabel, string> = { Passage: 'passageRows', Sentence: 'sentenceRows' };
const FULLTEXT_INDEX: Record<UnitLabel, string> = { Passage: 'passage_search_text', Sentence: 'sentence_search_text' };

export interface UnitText {
  id: string;
  text: string;
}

/** Where a vector-index sync starts: the server's clock, the store it reads and the embedder the store uses. */
export interface SyncPoint {
  now: Date;
  storeId: string;
  /** The one embedder whose vectors this store holds; null until the first vectors are stored. */
  embedderId: string | null;
}

/** A unit version as the vector index needs it. */
export interface EmbeddedUnit {
  rowId: number;
  embedding: number[];
  validFrom: Date;
  validTo: Date | null;
}

export interface UnitRecord {
  id: string;
  rowId: number | null;
  articleId: string;
  text: string;
  validFrom: Date;
  validTo: Date | null;
  /** The times its text states (event time), at their offsets in `text`. */
  eventTimes: EventTime[];
}

/** A unit version found by a search, with the score its retriever gave it. */
export interface ScoredUnit extends UnitRecord {
  score: number;
  /** On lexical hits: the text BM25 matched (the article's title, then the unit's text). */
  searchText?: string;
}

const FIELDS = `.id, .rowId, .articleId, .text, .validFrom, .validTo, ${EVENT_TIME_FIELDS}`;
export const UNIT_FIELDS = `u {${FIELDS}}`;
const SCORED_UNIT_FIELDS = `u {${FIELDS}, score: score}`;
const LEXICAL_HIT_FIELDS = `u {${FIELDS}, .searchText, score: score}`;

function toScoredUnit(row: Record<string, unknown>): ScoredUnit {
  return { ...toUnit(row), score: row.score as number };
}

function toLexicalHit(row: Record<string, unknown>): ScoredUnit {
  return { ...toScoredUnit(row), searchText: row.searchText as string };
}

export function toUnit(row: Record<string, unknown>): UnitRecord {
  return {
    id: row.id as string,
    rowId: (row.rowId as number | null) ?? null,
    articleId: row.articleId as string,
    text: row.text as string,
    validFrom: requireDate(row.validFrom),
    validTo: fromNeo4jDateTime(row.validTo),
    eventTimes: eventTimesOf(row, row.text as string),
  };
}

/** Units keyed by their vector-index row, as read from `u {…}` maps. */
function byRowId(units: Array<Record<string, unknown>>): Map<number, UnitRecord> {
  return new Map(units.map((unit) => [unit.rowId as number, toUnit(unit)]));
}

/** Lucene's query syntax characters, escaped so user text is searched as words. */
export function escapeLucene(text: string): string {
  return text.replace(/[+\-&|!(){}[\]^"~*?:\\/]/g, '\\$&');
}

/**
 * User text as a Lucene query of plain words: syntax characters escaped, and lower-cased so
 * AND, OR, NOT and TO are words too (the English analyzer lower-cases anyway).
 */
export function luceneQuery(text: string): string {
  return escapeLucene(text.toLowerCase()).trim();
}

/** Cypher of the retrieval layer: embedding bookkeeping, index sync, fulltext and vector search. */
export class RetrievalRepository {
  constructor(private readonly db: CypherRunner) {}

  /**
   * The server's time and the identity of the vectors this store holds, read together once
   * per sync. A vector index saved on disk belongs to one identity; emptying the store deletes
   * it, so a stale index is never trusted. The identity is written only when it is missing,
   * so the common case is a plain read.
   */
  async syncPoint(): Promise<SyncPoint> {
    const rows = await this.db.run<{ now: unknown; storeId: string | null; embedderId: string | null }>(
      `OPTIONAL MATCH (s:RetrievalState {name: 'vectors'}) RETURN datetime() AS now, s.storeId AS storeId, s.embedderId AS embedderId`,
    );
    const { now, storeId, embedderId } = rows[0]!;
    if (storeId !== null) return { now: requireDate(now), storeId, embedderId };
    const created = await this.db.run<{ now: unknown; storeId: string; embedderId: string | null }>(
      `MERGE (s:RetrievalState {name: 'vectors'}) ON CREATE SET s.storeId = randomUUID()
       RETURN datetime() AS now, s.storeId AS storeId, s.embedderId AS embedderId`,
    );
    return { now: requireDate(created[0]!.now), storeId: created[0]!.storeId, embedderId: created[0]!.embedderId };
  }

  /**
   * Makes `embedderId` the store's embedder unless it already has one (or, with `replace`,
   * always), and returns the store's embedder. The first write takes the node's lock, so two
   * processes claiming at once read each other's claim.
   */
  async claimEmbedder(embedderId: string, options: { replace?: boolean } = {}): Promise<string> {
    const rows = await this.db.run<{ embedderId: string }>(
      `MERGE (s:RetrievalState {name: 'vectors'}) ON CREATE SET s.storeId = randomUUID()
       SET s.lockedAt = datetime()
       WITH s SET s.embedderId = CASE WHEN $replace OR s.embedderId IS NULL THEN $embedderId ELSE s.embedderId END
       RETURN s.embedderId AS embedderId`,
      { embedderId, replace: options.replace ?? false },
    );
    return rows[0]!.embedderId;
  }

  /** Marks every unit not embedded by `embedderId` as pending (after a change of embedder). */
  async markStaleEmbeddings(label: UnitLabel, embedderId: string): Promise<number> {
    const rows = await this.db.run<{ marked: number }>(
      `MATCH (u:${label}) WHERE u.embedderId IS NULL OR u.embedderId <> $embedderId
       SET u:PendingEmbedding RETURN count(u) AS marked`,
      { embedderId },
    );
    return rows[0]?.marked ?? 0;
  }

  /**
   * The newest snapshot's units first, so that a small ingest becomes searchable without waiting
   * behind an older one's backlog (a 30 MB article once kept an unrelated ingest waiting 16 min).
   */
  async pendingEmbeddings(label: UnitLabel, limit: number): Promise<UnitText[]> {
    return this.db.run<UnitText>(`MATCH (u:${label}:PendingEmbedding) RETURN u.id AS id, u.text AS text ORDER BY u.validFrom DESC LIMIT $limit`, {
      limit: int(limit),
    });
  }

  /** Units waiting for a vector; with `validFrom`, only those of snapshots taken then or later. */
  async countPendingEmbeddings(label: UnitLabel, validFrom: Date | null = null): Promise<number> {
    const rows = await this.db.run<{ total: number }>(
      `MATCH (u:${label}:PendingEmbedding) WHERE $validFrom IS NULL OR u.validFrom >= $validFrom RETURN count(u) AS total`,
      { validFrom: validFrom && toNeo4jDateTime(validFrom) },
    );
    return rows[0]?.total ?? 0;
  }

  /**
   * Reserves `count` row numbers for the native index and returns the first. The counter is
   * locked only for this short transaction, so batches can store their vectors in parallel.
   */
  async reserveRows(label: UnitLabel, count: number): Promise<number> {
    const rows = await this.db.run<{ first: number }>(
      `MATCH (c:ChangeSequence {name: $counter}) SET c.value = c.value + $count RETURN c.value - $count + 1 AS first`,
      { counter: ROW_COUNTER[label], count: int(count) },
    );
    return rows[0]!.first;
  }

  /**
   * Stores embeddings, in one statement, if `embedderId` is still the store's embedder (or the
   * store has none yet); returns the store's embedder, so a caller whose vectors were refused
   * knows by whom. The statement takes the store's lock first: a `reembed` that switches the
   * embedder waits for it, and every later store of the old embedder is refused. A unit without
   * a row number takes `firstRowId` plus its position; a unit keeps its row across
   * re-embeddings, which leaves that reserved number unused (row numbers only need to be unique).
   */
  async storeEmbeddings(
    label: UnitLabel,
    embedderId: string,
    firstRowId: number,
    rows: Array<{ id: string; embedding: number[] }>,
  ): Promise<{ stored: boolean; storeEmbedderId: string }> {
    const result = await this.db.run<{ current: boolean; storeEmbedderId: string }>(
      `OPTIONAL MATCH (s:RetrievalState {name: 'vectors'})
       SET s.lockedAt = datetime()
       WITH coalesce(s.embedderId, $embedderId) AS storeEmbedderId
       CALL {
         WITH storeEmbedderId
         UNWIND CASE WHEN storeEmbedderId = $embedderId THEN range(0, size($rows) - 1) ELSE [] END AS position
         WITH position, $rows[position] AS row
         MATCH (u:${label} {id: row.id})
         SET u.rowId = coalesce(u.rowId, $firstRowId + position), u.embedding = row.embedding,
             u.embedderId = $embedderId, u.embeddedAt = datetime()
         REMOVE u:PendingEmbedding
         RETURN count(*) AS written
       }
       RETURN storeEmbedderId = $embedderId AS current, storeEmbedderId`,
      { rows, embedderId, firstRowId: int(firstRowId) },
    );
    return { stored: result[0]!.current, storeEmbedderId: result[0]!.storeEmbedderId };
  }

  /** Embedded units after `afterRowId` in row order, optionally only those embedded since a time. */
  async embeddedUnits(label: UnitLabel, embedderId: string, options: { since: Date | null; afterRowId: number; limit: number }): Promise<EmbeddedUnit[]> {
    const rows = await this.db.run<{ rowId: number; embedding: number[]; validFrom: unknown; validTo: unknown }>(
      `MATCH (u:${label}) WHERE u.rowId > $afterRowId AND u.embedderId = $embedderId
         AND ($since IS NULL OR u.embeddedAt >= $since)
       RETURN u.rowId AS rowId, u.embedding AS embedding, u.validFrom AS validFrom, u.validTo AS validTo
       ORDER BY u.rowId LIMIT $limit`,
      {
        embedderId,
        afterRowId: int(options.afterRowId),
        since: options.since && toNeo4jDateTime(options.since),
        limit: int(options.limit),
      },
    );
    return rows.map((row) => ({
      rowId: row.rowId,
      embedding: row.embedding,
      validFrom: requireDate(row.validFrom),
      validTo: fromNeo4jDateTime(row.validTo),
    }));
  }

  /** Units whose valid time was closed since `since` (transaction time). */
  async closedSince(label: UnitLabel, since: Date): Promise<Array<{ rowId: number; validTo: Date }>> {
    const rows = await this.db.run<{ rowId: number; validTo: unknown }>(
      `MATCH (u:${label}) WHERE u.closedAt >= $since AND u.rowId IS NOT NULL
       RETURN u.rowId AS rowId, u.validTo AS validTo`,
      { since: toNeo4jDateTime(since) },
    );
    return rows.map((row) => ({ rowId: row.rowId, validTo: requireDate(row.validTo) }));
  }

  async unitsByRowIds(label: UnitLabel, rowIds: readonly number[]): Promise<Map<number, UnitRecord>> {
    if (rowIds.length === 0) return new Map();
    const rows = await this.db.run<{ unit: Record<string, unknown> }>(
      `UNWIND $rowIds AS rowId MATCH (u:${label} {rowId: rowId}) RETURN ${UNIT_FIELDS} AS unit`,
      { rowIds: rowIds.map(int) },
    );
    return byRowId(rows.map((row) => row.unit));
  }

  async unitsByIds(label: UnitLabel, ids: readonly string[]): Promise<Map<string, UnitRecord>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.run<{ unit: Record<string, unknown> }>(`UNWIND $ids AS id MATCH (u:${label} {id: id}) RETURN ${UNIT_FIELDS} AS unit`, { ids });
    return new Map(rows.map((row) => [row.unit.id as string, toUnit(row.unit)]));
  }

  /** Every version of these articles' units that the store knew as of `asOf`, current or not, oldest first; at most `limit`. */
  async unitsKnownAsOf(label: UnitLabel, articleIds: readonly string[], asOf: Date, limit: number): Promise<UnitRecord[]> {
    if (articleIds.length === 0) return [];
    const rows = await this.db.run<{ unit: Record<string, unknown> }>(
      `UNWIND $ids AS id MATCH (u:${label}) WHERE u.articleId = id AND ${knownAsOfCypher('u')}
       RETURN ${UNIT_FIELDS} AS unit ORDER BY u.validFrom, u.id LIMIT $limit`,
      { ids: [...articleIds], asOf: toNeo4jDateTime(asOf), limit: int(limit) },
    );
    return rows.map((row) => toUnit(row.unit));
  }

  /** Texts of units valid now, for fitting an embedder's corpus statistics. */
  async currentTexts(label: UnitLabel, limit: number): Promise<string[]> {
    const rows = await this.db.run<{ text: string }>(`MATCH (u:${label}) WHERE ${currentVersionCypher('u')} RETURN u.text AS text LIMIT $limit`, {
      limit: int(limit),
    });
    return rows.map((row) => row.text);
  }

  /** Of these names, those that no passage of any time mentions (as a phrase of their words). */
  async namesNeverMentioned(names: readonly string[]): Promise<string[]> {
    const phrases = names.map((name) => ({ name, phrase: luceneQuery(name) })).filter(({ phrase }) => phrase !== '');
    if (phrases.length === 0) return [];
    const rows = await this.db.run<{ name: string; found: number }>(
      `UNWIND $phrases AS p
       CALL { WITH p CALL db.index.fulltext.queryNodes($index, '"' + p.phrase + '"', {limit: 1}) YIELD node RETURN count(node) AS found }
       RETURN p.name AS name, found`,
      { phrases, index: FULLTEXT_INDEX.Passage },
    );
    return rows.filter((row) => row.found === 0).map((row) => row.name);
  }

  /**
   * BM25 search through Neo4j's fulltext index (Lucene), keeping units valid at asOf: Lucene
   * keeps those whose validity keys say so (validAtLucene), and the list is still checked and
   * deepened by valid time, which decides. The units at `alsoLoadRowIds` (another retriever's
   * candidates) are loaded in the same round trip, so a hybrid search needs no second query to
   * turn fused candidates into units.
   */
  async lexicalSearch(
    label: UnitLabel,
    query: string,
    asOf: Date,
    k: number,
    alsoLoadRowIds: readonly number[] = [],
  ): Promise<{ hits: ScoredUnit[]; loaded: Map<number, UnitRecord> }> {
    const escaped = luceneQuery(query);
    if (escaped === '') return { hits: [], loaded: await this.unitsByRowIds(label, alsoLoadRowIds) };
    const { hits, loaded } = await untilEnoughValid(k, async (candidates) => {
      const rows = await this.db.run<{ scanned: number; hits: Array<Record<string, unknown>>; loaded: Array<Record<string, unknown>> }>(
        // A version that only the validity clauses match scores 0: the words were all stop words or syntax ("the of").
        `CALL {
           CALL db.index.fulltext.queryNodes($index, $query, {limit: $candidates}) YIELD node AS u, score WHERE score > 0
           ${VALID_CANDIDATES(LEXICAL_HIT_FIELDS)}
         }
         CALL {
           UNWIND $rowIds AS rowId MATCH (u:${label} {rowId: rowId})
           RETURN collect(${UNIT_FIELDS}) AS loaded
         }
         RETURN scanned, hits, loaded`,
        {
          index: FULLTEXT_INDEX[label],
          query: `searchText:(${escaped}) AND ${validAtLucene(asOf)}`,
          candidates: int(candidates),
          k: int(k),
          asOf: toNeo4jDateTime(asOf),
          rowIds: alsoLoadRowIds.map(int),
        },
      );
      return rows[0]!;
    });
    return { hits: hits.map(toLexicalHit), loaded: byRowId(loaded) };
  }

  vectorIndexName(label: UnitLabel, dimension: number): string {
    return `${label.toLowerCase()}_embedding_${dimension}`;
  }

  async ensureVectorIndex(label: UnitLabel, dimension: number, runSchema: (cypher: string) => Promise<void>): Promise<void> {
    await runSchema(
      `CREATE VECTOR INDEX ${this.vectorIndexName(label, dimension)} IF NOT EXISTS FOR (u:${label}) ON u.embedding
       OPTIONS { indexConfig: { \`vector.dimensions\`: ${dimension}, \`vector.similarity_function\`: 'cosine' } }`,
    );
  }

  /** Approximate (HNSW) search through Neo4j's own vector index: the comparison path. */
  async vectorSearch(label: UnitLabel, embedding: number[], embedderId: string, asOf: Date, k: number): Promise<ScoredUnit[]> {
    const { hits } = await untilEnoughValid(k, async (candidates) => {
      const rows = await this.db.run<{ scanned: number; hits: Array<Record<string, unknown>> }>(
        `CALL db.index.vector.queryNodes($index, $candidates, $embedding) YIELD node AS u, score
         ${VALID_CANDIDATES(SCORED_UNIT_FIELDS, 'u.embedderId = $embedderId')}`,
        {
          index: this.vectorIndexName(label, embedding.length),
          candidates: int(candidates),
          embedding,
          embedderId,
          k: int(k),
          asOf: toNeo4jDateTime(asOf),
        },
      );
      return rows[0]!;
    });
    return hits.map(toScoredUnit);
  }
}

/** Candidates asked of a fulltext or vector index at most, for one query. */
const MAX_INDEX_CANDIDATES = 25_600;

/**
 * Cypher that follows an index call yielding `u, score`: how many candidates the index gave
 * (`scanned`) and the best k of them valid at $asOf and meeting `condition` (`hits`, as
 * `fields`), in one row even when there are none.
 */
const VALID_CANDIDATES = (fields: string, condition = 'true'): string =>
  `WITH collect({u: u, score: score}) AS candidates
   CALL {
     WITH candidates
     UNWIND candidates AS candidate
     WITH candidate.u AS u, candidate.score AS score
     WHERE ${validAtCypher('u')} AND ${condition}
     WITH u, score ORDER BY score DESC, u.id LIMIT $k
     RETURN collect(${fields}) AS hits
   }
   RETURN size(candidates) AS scanned, hits`;

/**
 * Runs an index search whose candidates are filtered by valid time after the index ranked them
 * (Lucene and HNSW know nothing of it), deepened by the time model's one policy.
 */
function untilEnoughValid<R extends { scanned: number; hits: unknown[] }>(k: number, search: (candidates: number) => Promise<R>): Promise<R> {
  return deepenUntilEnoughValid(k, { first: Math.max(100, k * 4), limit: MAX_INDEX_CANDIDATES }, async (candidates) => {
    const result = await search(candidates);
    return { result, valid: result.hits.length, scanned: result.scanned };
  });
}
