import { join } from 'node:path';
import type { Database } from '../graph/database.js';
import { RetrievalRepository, type ScoredUnit, type UnitLabel, type UnitRecord, type UnitText } from '../graph/retrievalRepository.js';
import { Fusion, toDayNumber } from '../native/index.js';
import { createEmbedder, embedderConfigFromEnv, WinkSifEmbedder, type Embedder } from './embedders/index.js';
import { contentTerms, coversAll } from './language.js';
import { UnitVectorIndex } from './unitIndex.js';

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

const LABEL: Record<SearchUnit, UnitLabel> = { PASSAGE: 'Passage', SENTENCE: 'Sentence' };
const UNITS: SearchUnit[] = [SearchUnit.PASSAGE, SearchUnit.SENTENCE];
const EMBED_BATCH = 2000;
/**
 * Batches stored at once: Neo4j writes one transaction on one core, so a second batch in
 * flight keeps the other core busy (and overlaps embedding with writing).
 */
const EMBED_WRITERS = 2;
/** Hybrid search fuses this many candidates from each side (at least k). */
const FUSION_DEPTH = 30;

export interface SearchOptions {
  asOf: Date;
  k: number;
  mode: SearchMode;
  unit: SearchUnit;
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

/**
 * How hybrid search combines its two lists: `weighted` sums min-max-normalised scores with
 * fixed weights; `adaptive` does the same but lets the lexical list count only when its top hit
 * holds every content word of the query. A query worded unlike the text it asks about (a
 * paraphrase) leaves BM25 ranking passages by incidental words, and min-max normalisation would
 * lift that off-topic list to full weight; dense search then decides alone. `rrf` is
 * reciprocal-rank fusion.
 */
export interface FusionSettings {
  method: 'weighted' | 'adaptive' | 'rrf';
  denseWeight: number;
  lexicalWeight: number;
}

export const DEFAULT_FUSION: FusionSettings = { method: 'adaptive', denseWeight: 0.5, lexicalWeight: 0.5 };

/** A nearest neighbour from the native index: a unit's row number and its similarity. */
interface DenseRow {
  rowId: number;
  score: number;
}

/** What one query's search produced: the final order, and each retriever's own list for its scores and ranks. */
interface CandidateLists {
  ranking: ScoredUnit[];
  dense?: ScoredUnit[];
  lexical?: ScoredUnit[];
}

export interface RefreshReport {
  embedded: number;
  added: number;
  closed: number;
}

/**
 * The retrieval layer: keeps every passage and sentence version embedded (in Neo4j) and in
 * the native vector indexes (time-filtered in the kernel), and answers dense, lexical
 * (Neo4j fulltext, BM25), hybrid and Neo4j-vector searches as of a date.
 */
export class RetrievalService {
  private indexes: Map<SearchUnit, UnitVectorIndex> | undefined;
  /** The embedder id the store was last prepared for (stale vectors marked, vector indexes created). */
  private preparedFor: string | undefined;
  private refreshing: Promise<RefreshReport> | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly db: Database,
    private readonly repository: RetrievalRepository,
    private readonly embedder: Embedder,
    private readonly indexDirectory: string,
    private readonly fusion: FusionSettings,
  ) {}

  static async open(options: { db: Database; dataDir: string; embedder?: Embedder; fusion?: FusionSettings }): Promise<RetrievalService> {
    const embedder = options.embedder ?? (await createEmbedder(embedderConfigFromEnv(process.env, { dataDir: options.dataDir })));
    const repository = new RetrievalRepository(options.db);
    const indexDirectory = join(options.dataDir, 'indexes', embedder.id.replace(/[^\w.@-]+/g, '_'));
    return new RetrievalService(options.db, repository, embedder, indexDirectory, options.fusion ?? DEFAULT_FUSION);
  }

  get embedderId(): string {
    return this.embedder.id;
  }

  /**
   * Embeds every unit version still waiting for a vector, in batches, and stores the vectors
   * in Neo4j. The default embedder first learns its word statistics from the corpus (SIF),
   * once; those are saved, and vectors of another embedder are redone.
   */
  async embedPending(onProgress?: (done: number, total: number) => void): Promise<number> {
    await this.fitEmbedderOnce();
    await this.prepareForEmbedder();
    let done = 0;
    const total = (await Promise.all(UNITS.map((unit) => this.repository.countPendingEmbeddings(LABEL[unit])))).reduce((a, b) => a + b, 0);
    for (const unit of UNITS) {
      for (;;) {
        const pending = await this.repository.pendingEmbeddings(LABEL[unit], EMBED_BATCH * EMBED_WRITERS);
        if (pending.length === 0) break;
        const batches = Array.from({ length: Math.ceil(pending.length / EMBED_BATCH) }, (_, b) =>
          pending.slice(b * EMBED_BATCH, (b + 1) * EMBED_BATCH),
        );
        await Promise.all(
          batches.map(async (batch) => {
            await this.embedAndStore(LABEL[unit], batch);
            done += batch.length;
            onProgress?.(done, total);
          }),
        );
      }
    }
    return done;
  }

  private async embedAndStore(label: UnitLabel, batch: UnitText[]): Promise<void> {
    const vectors = await this.embedder.embed(batch.map((item) => item.text));
    const dimension = this.embedder.dimension;
    const firstRowId = await this.repository.reserveRows(label, batch.length);
    await this.repository.storeEmbeddings(
      label,
      this.embedder.id,
      firstRowId,
      batch.map((item, row) => ({ id: item.id, embedding: Array.from(vectors.subarray(row * dimension, (row + 1) * dimension)) })),
    );
  }

  /** Embeds what is pending and brings the native indexes up to date; concurrent calls share one run. */
  refresh(): Promise<RefreshReport> {
    this.refreshing ??= this.runRefresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /**
   * Refreshes now and then every `intervalMs` until close(): a server uses this to follow
   * snapshots ingested by other processes.
   */
  keepFresh(intervalMs: number, report: (outcome: RefreshReport | Error) => void): void {
    const tick = (): void => {
      this.refresh()
        .then(report, (error: Error) => report(error))
        .finally(() => {
          if (!this.closed) this.refreshTimer = setTimeout(tick, intervalMs).unref();
        });
    };
    tick();
  }

  async search(query: string, options: SearchOptions): Promise<SearchHit[]> {
    return (await this.batchSearch([query], options))[0]!;
  }

  /**
   * Many queries at once: the dense side is one batched native call. Each query then costs
   * one Neo4j round trip: a hybrid search loads its dense candidates in the statement that
   * runs its lexical search.
   */
  async batchSearch(queries: readonly string[], options: SearchOptions): Promise<SearchHit[][]> {
    const label = LABEL[options.unit];
    const { mode, asOf, k } = options;
    const depth = mode === SearchMode.HYBRID ? Math.max(k, FUSION_DEPTH) : k;
    let lists: CandidateLists[];
    if (mode === SearchMode.NEO4J_VECTOR) {
      lists = (await this.neo4jVectorSearch(queries, label, asOf, k)).map((hits) => ({ ranking: hits }));
    } else if (mode === SearchMode.LEXICAL) {
      lists = await Promise.all(
        queries.map(async (query) => {
          const { hits } = await this.repository.lexicalSearch(label, query, asOf, depth);
          return { ranking: hits, lexical: hits };
        }),
      );
    } else {
      const denseRows = await this.denseSearch(queries, options.unit, asOf, depth);
      if (mode === SearchMode.DENSE) {
        const units = await this.repository.unitsByRowIds(label, [...new Set(denseRows.flat().map((row) => row.rowId))]);
        lists = denseRows.map((rows) => {
          const dense = withUnits(rows, units);
          return { ranking: dense, dense };
        });
      } else {
        lists = await Promise.all(
          queries.map(async (query, q) => {
            const rows = denseRows[q]!;
            const { hits, loaded } = await this.repository.lexicalSearch(label, query, asOf, depth, rows.map((row) => row.rowId));
            const dense = withUnits(rows, loaded);
            return { ranking: await this.fuse(query, dense, hits), dense, lexical: hits };
          }),
        );
      }
    }
    return lists.map(({ ranking, dense, lexical }) => {
      const denseRanks = rankOf(dense);
      const lexicalRanks = rankOf(lexical);
      return ranking.slice(0, k).map(({ score, ...unit }, position) => ({
        ...unit,
        unit: options.unit,
        rank: position + 1,
        score,
        denseScore: denseRanks.get(unit.id)?.score ?? null,
        denseRank: denseRanks.get(unit.id)?.rank ?? null,
        lexicalScore: lexicalRanks.get(unit.id)?.score ?? null,
        lexicalRank: lexicalRanks.get(unit.id)?.rank ?? null,
      }));
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.refreshTimer);
    await this.refreshing?.catch(() => undefined);
    if (this.indexes) {
      for (const index of this.indexes.values()) {
        await index.save();
        index.close();
      }
    }
    await (this.embedder as { close?: () => Promise<void> }).close?.();
  }

  private async runRefresh(): Promise<RefreshReport> {
    const embedded = await this.embedPending();
    const point = await this.repository.syncPoint();
    const indexes = await this.openIndexes(point.storeId);
    let added = 0;
    let closed = 0;
    for (const index of indexes.values()) {
      const outcome = await index.sync(point);
      added += outcome.added;
      closed += outcome.closed;
      if (outcome.added + outcome.closed > 0) await index.save();
    }
    return { embedded, added, closed };
  }

  private async openIndexes(storeId?: string): Promise<Map<SearchUnit, UnitVectorIndex>> {
    if (!this.indexes) {
      const identity = storeId ?? (await this.repository.syncPoint()).storeId;
      const opened = new Map<SearchUnit, UnitVectorIndex>();
      for (const unit of UNITS) {
        opened.set(
          unit,
          await UnitVectorIndex.open({
            label: LABEL[unit],
            embedderId: this.embedder.id,
            dimension: this.embedder.dimension,
            directory: this.indexDirectory,
            repository: this.repository,
            storeId: identity,
          }),
        );
      }
      this.indexes = opened;
    }
    return this.indexes;
  }

  /**
   * Marks vectors of any other embedder as stale and creates the Neo4j vector indexes, once per
   * embedder id: a full scan of every unit that a periodic refresh must not repeat. New unit
   * versions are created pending, so they need no marking.
   */
  private async prepareForEmbedder(): Promise<void> {
    if (this.preparedFor === this.embedder.id) return;
    for (const unit of UNITS) {
      const label = LABEL[unit];
      await this.repository.markStaleEmbeddings(label, this.embedder.id);
      await this.repository.ensureVectorIndex(label, this.embedder.dimension, (cypher) => this.db.runSchemaStatement(cypher));
    }
    this.preparedFor = this.embedder.id;
  }

  private async fitEmbedderOnce(): Promise<void> {
    if (!(this.embedder instanceof WinkSifEmbedder) || this.embedder.fitted) return;
    const texts = await this.repository.currentTexts('Passage', 20_000);
    if (texts.length === 0) return;
    await this.embedder.fit(texts);
    if (this.embedder.stateFile) await this.embedder.save();
  }

  /** Row numbers and scores of each query's nearest units valid at asOf, from the native index. */
  private async denseSearch(queries: readonly string[], unit: SearchUnit, asOf: Date, k: number): Promise<DenseRow[][]> {
    const index = (await this.openIndexes()).get(unit)!;
    const vectors = await this.embedder.embed(queries);
    const dimension = this.embedder.dimension;
    // A query with no known word embeds to zero and has no dense neighbours.
    const answerable = queries.map((_, q) => vectors.subarray(q * dimension, (q + 1) * dimension).some((x) => x !== 0));
    const rows = answerable.flatMap((ok, q) => (ok ? [q] : []));
    const results = rows.length === 0 || index.size === 0
      ? []
      : await index.search(
          Float32Array.from(rows.flatMap((q) => Array.from(vectors.subarray(q * dimension, (q + 1) * dimension)))),
          k,
          new Int32Array(rows.length).fill(toDayNumber(asOf)),
        );
    const rankings: DenseRow[][] = queries.map(() => []);
    rows.forEach((q, position) => {
      const result = results[position];
      if (result) rankings[q] = Array.from(result.ids, (rowId, i) => ({ rowId, score: result.scores[i]! }));
    });
    return rankings;
  }

  private async neo4jVectorSearch(queries: readonly string[], label: UnitLabel, asOf: Date, k: number): Promise<ScoredUnit[][]> {
    const vectors = await this.embedder.embed(queries);
    const dimension = this.embedder.dimension;
    return Promise.all(
      queries.map((_, q) => {
        const vector = Array.from(vectors.subarray(q * dimension, (q + 1) * dimension));
        return vector.some((x) => x !== 0) ? this.repository.vectorSearch(label, vector, this.embedder.id, asOf, k) : [];
      }),
    );
  }

  private async fuse(query: string, dense: ScoredUnit[], lexical: ScoredUnit[]): Promise<ScoredUnit[]> {
    const lists = {
      dense: { ids: dense.map((hit) => hit.id), scores: dense.map((hit) => hit.score) },
      lexical: { ids: lexical.map((hit) => hit.id), scores: lexical.map((hit) => hit.score) },
    };
    let weights = { dense: this.fusion.denseWeight, lexical: this.fusion.lexicalWeight };
    if (this.fusion.method === 'adaptive' && !(lexical.length > 0 && coversAll(contentTerms(query), lexical[0]!.text))) {
      weights = { ...weights, lexical: 0 };
    }
    const fused =
      this.fusion.method === 'rrf'
        ? await Fusion.rrf([lists.dense.ids, lists.lexical.ids], { weights: [weights.dense, weights.lexical] })
        : await Fusion.weightedSum(lists, weights);
    const units = new Map([...lexical, ...dense].map((hit) => [hit.id, hit]));
    return fused.map((item) => ({ ...units.get(item.id)!, score: item.score }));
  }
}

/** Dense results with their units; a row whose unit is gone (the store was emptied) is dropped. */
function withUnits(rows: readonly DenseRow[], units: ReadonlyMap<number, UnitRecord>): ScoredUnit[] {
  return rows.flatMap(({ rowId, score }) => {
    const unit = units.get(rowId);
    return unit ? [{ ...unit, score }] : [];
  });
}

function rankOf(ranking: readonly ScoredUnit[] | undefined): Map<string, { rank: number; score: number }> {
  return new Map((ranking ?? []).map((hit, index) => [hit.id, { rank: index + 1, score: hit.score }]));
}
