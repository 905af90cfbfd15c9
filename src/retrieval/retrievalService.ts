import { join } from 'node:path';
import type { Database } from '../graph/database.js';
import { RetrievalRepository, type ScoredUnitId, type UnitLabel, type UnitRecord } from '../graph/retrievalRepository.js';
import { Fusion, toDayNumber } from '../native/index.js';
import { createEmbedder, embedderConfigFromEnv, WinkSifEmbedder, type Embedder } from './embedders/index.js';
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
const EMBED_BATCH = 512;
/** Hybrid search fuses this many candidates from each side (at least k). */
const FUSION_DEPTH = 50;

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

/** Weighted min-max fusion by default; `rrf` ranks by reciprocal rank instead. */
export interface FusionSettings {
  method: 'weighted' | 'rrf';
  denseWeight: number;
  lexicalWeight: number;
}

export const DEFAULT_FUSION: FusionSettings = { method: 'weighted', denseWeight: 0.3, lexicalWeight: 0.7 };

/** A ranked list from one retriever, by unit id. */
type Ranked = ScoredUnitId[];

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
    let done = 0;
    for (const unit of UNITS) {
      const label = LABEL[unit];
      await this.repository.markStaleEmbeddings(label, this.embedder.id);
      await this.repository.ensureVectorIndex(label, this.embedder.dimension, (cypher) => this.db.runSchemaStatement(cypher));
    }
    const total = (await Promise.all(UNITS.map((unit) => this.repository.countPendingEmbeddings(LABEL[unit])))).reduce((a, b) => a + b, 0);
    for (const unit of UNITS) {
      for (;;) {
        const batch = await this.repository.pendingEmbeddings(LABEL[unit], EMBED_BATCH);
        if (batch.length === 0) break;
        const vectors = await this.embedder.embed(batch.map((item) => item.text));
        const dimension = this.embedder.dimension;
        await this.repository.storeEmbeddings(
          LABEL[unit],
          this.embedder.id,
          batch.map((item, row) => ({ id: item.id, embedding: Array.from(vectors.subarray(row * dimension, (row + 1) * dimension)) })),
        );
        done += batch.length;
        onProgress?.(done, total);
      }
    }
    return done;
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

  /** Many queries at once: the dense side is one batched native call. */
  async batchSearch(queries: readonly string[], options: SearchOptions): Promise<SearchHit[][]> {
    const label = LABEL[options.unit];
    const depth = options.mode === SearchMode.HYBRID ? Math.max(options.k, FUSION_DEPTH) : options.k;
    const needsDense = options.mode === SearchMode.HYBRID || options.mode === SearchMode.DENSE;
    const needsLexical = options.mode === SearchMode.HYBRID || options.mode === SearchMode.LEXICAL;
    const [dense, lexical, neo4jVector] = await Promise.all([
      needsDense ? this.denseSearch(queries, options.unit, options.asOf, depth) : undefined,
      needsLexical ? Promise.all(queries.map((query) => this.repository.lexicalSearch(label, query, options.asOf, depth))) : undefined,
      options.mode === SearchMode.NEO4J_VECTOR ? this.neo4jVectorSearch(queries, label, options.asOf, options.k) : undefined,
    ]);
    const rankings = await Promise.all(
      queries.map(async (_, q) => {
        if (options.mode === SearchMode.HYBRID) return this.fuse(dense![q]!, lexical![q]!, options.k);
        return (dense ?? lexical ?? neo4jVector)![q]!;
      }),
    );
    const units = await this.repository.unitsByIds(label, [...new Set(rankings.flat().map((hit) => hit.id))]);
    return rankings.map((ranking, q) => {
      const denseRanks = rankOf(dense?.[q]);
      const lexicalRanks = rankOf(lexical?.[q]);
      return ranking.slice(0, options.k).flatMap((hit, position) => {
        const unit = units.get(hit.id);
        if (!unit) return [];
        return [
          {
            ...unit,
            unit: options.unit,
            rank: position + 1,
            score: hit.score,
            denseScore: denseRanks.get(hit.id)?.score ?? null,
            denseRank: denseRanks.get(hit.id)?.rank ?? null,
            lexicalScore: lexicalRanks.get(hit.id)?.score ?? null,
            lexicalRank: lexicalRanks.get(hit.id)?.rank ?? null,
          },
        ];
      });
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
    const indexes = await this.openIndexes();
    let added = 0;
    let closed = 0;
    for (const index of indexes.values()) {
      const outcome = await index.sync();
      added += outcome.added;
      closed += outcome.closed;
      if (outcome.added + outcome.closed > 0) await index.save();
    }
    return { embedded, added, closed };
  }

  private async openIndexes(): Promise<Map<SearchUnit, UnitVectorIndex>> {
    if (!this.indexes) {
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
          }),
        );
      }
      this.indexes = opened;
    }
    return this.indexes;
  }

  private async fitEmbedderOnce(): Promise<void> {
    if (!(this.embedder instanceof WinkSifEmbedder) || this.embedder.fitted) return;
    const texts = await this.repository.currentTexts('Passage', 20_000);
    if (texts.length === 0) return;
    await this.embedder.fit(texts);
    if (this.embedder.stateFile) await this.embedder.save();
  }

  private async denseSearch(queries: readonly string[], unit: SearchUnit, asOf: Date, k: number): Promise<Ranked[]> {
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
    const allRowIds = results.flatMap((result) => Array.from(result.ids));
    const byRow = await this.repository.unitsByRowIds(LABEL[unit], allRowIds);
    const rankings: Ranked[] = queries.map(() => []);
    rows.forEach((q, position) => {
      const result = results[position];
      if (!result) return;
      rankings[q] = Array.from(result.ids).flatMap((rowId, i) => {
        const found = byRow.get(rowId);
        return found ? [{ id: found.id, score: result.scores[i]! }] : [];
      });
    });
    return rankings;
  }

  private async neo4jVectorSearch(queries: readonly string[], label: UnitLabel, asOf: Date, k: number): Promise<Ranked[]> {
    const vectors = await this.embedder.embed(queries);
    const dimension = this.embedder.dimension;
    return Promise.all(
      queries.map((_, q) => {
        const vector = Array.from(vectors.subarray(q * dimension, (q + 1) * dimension));
        return vector.some((x) => x !== 0) ? this.repository.vectorSearch(label, vector, this.embedder.id, asOf, k) : [];
      }),
    );
  }

  private async fuse(dense: Ranked, lexical: Ranked, k: number): Promise<Ranked> {
    const lists = {
      dense: { ids: dense.map((hit) => hit.id), scores: dense.map((hit) => hit.score) },
      lexical: { ids: lexical.map((hit) => hit.id), scores: lexical.map((hit) => hit.score) },
    };
    const fused =
      this.fusion.method === 'rrf'
        ? await Fusion.rrf([lists.dense.ids, lists.lexical.ids], { weights: [this.fusion.denseWeight, this.fusion.lexicalWeight] })
        : await Fusion.weightedSum(lists, { dense: this.fusion.denseWeight, lexical: this.fusion.lexicalWeight });
    return fused.slice(0, k).map((item) => ({ id: item.id, score: item.score }));
  }
}

function rankOf(ranking: Ranked | undefined): Map<string, { rank: number; score: number }> {
  return new Map((ranking ?? []).map((hit, index) => [hit.id, { rank: index + 1, score: hit.score }]));
}
