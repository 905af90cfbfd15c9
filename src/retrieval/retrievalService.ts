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
const EMBED_BATCH = 2000;
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
 * fixed weights; `adaptive` scales each weight per query by how clearly that retriever's
 * top hit stands out (its score gap), so a retriever that is unsure of a query counts less;
 * `rrf` is reciprocal-rank fusion.
 */
export interface FusionSettings {
  method: 'weighted' | 'adaptive' | 'rrf';
  denseWeight: number;
  lexicalWeight: number;
}

export const DEFAULT_FUSION: FusionSettings = { method: 'adaptive', denseWeight: 0.5, lexicalWeight: 0.5 };

/** A ranked list from one retriever; `key` names a unit the same way in every list. */
type Ranked = Array<{ key: string; score: number }>;

/**
 * Units are fused by vector-index row so the dense side needs no database lookup before
 * fusion; a unit not embedded yet (only lexical search can find it) is named by its id.
 */
function candidateKey(candidate: Pick<ScoredUnitId, 'id' | 'rowId'>): string {
  return candidate.rowId === null || candidate.rowId === undefined ? `id:${candidate.id}` : `row:${candidate.rowId}`;
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
      needsLexical
        ? Promise.all(queries.map(async (query) => toRanked(await this.repository.lexicalSearch(label, query, options.asOf, depth))))
        : undefined,
      options.mode === SearchMode.NEO4J_VECTOR ? this.neo4jVectorSearch(queries, label, options.asOf, options.k) : undefined,
    ]);
    const rankings = await Promise.all(
      queries.map(async (_, q) => {
        const ranking = options.mode === SearchMode.HYBRID ? await this.fuse(dense![q]!, lexical![q]!) : (dense ?? lexical ?? neo4jVector)![q]!;
        return ranking.slice(0, options.k);
      }),
    );
    const units = await this.hydrate(label, rankings.flat().map((candidate) => candidate.key));
    return rankings.map((ranking, q) => {
      const denseRanks = rankOf(dense?.[q]);
      const lexicalRanks = rankOf(lexical?.[q]);
      return ranking.flatMap((candidate, position) => {
        const unit = units.get(candidate.key);
        if (!unit) return [];
        return [
          {
            ...unit,
            unit: options.unit,
            rank: position + 1,
            score: candidate.score,
            denseScore: denseRanks.get(candidate.key)?.score ?? null,
            denseRank: denseRanks.get(candidate.key)?.rank ?? null,
            lexicalScore: lexicalRanks.get(candidate.key)?.score ?? null,
            lexicalRank: lexicalRanks.get(candidate.key)?.rank ?? null,
          },
        ];
      });
    });
  }

  /** Loads the units behind candidate keys: by row where embedded, by id otherwise. */
  private async hydrate(label: UnitLabel, keys: string[]): Promise<Map<string, UnitRecord>> {
    const rowIds = [...new Set(keys.filter((key) => key.startsWith('row:')).map((key) => Number(key.slice(4))))];
    const ids = [...new Set(keys.filter((key) => key.startsWith('id:')).map((key) => key.slice(3)))];
    const [byRow, byId] = await Promise.all([
      rowIds.length > 0 ? this.repository.unitsByRowIds(label, rowIds) : new Map<number, UnitRecord>(),
      ids.length > 0 ? this.repository.unitsByIds(label, ids) : new Map<string, UnitRecord>(),
    ]);
    // Keyed as asked: a unit embedded between search and hydration is still found under its id key.
    return new Map<string, UnitRecord>([
      ...[...byRow].map(([rowId, unit]) => [`row:${rowId}`, unit] as const),
      ...[...byId].map(([id, unit]) => [`id:${id}`, unit] as const),
    ]);
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
    const rankings: Ranked[] = queries.map(() => []);
    rows.forEach((q, position) => {
      const result = results[position];
      if (result) rankings[q] = Array.from(result.ids, (rowId, i) => ({ key: `row:${rowId}`, score: result.scores[i]! }));
    });
    return rankings;
  }

  private async neo4jVectorSearch(queries: readonly string[], label: UnitLabel, asOf: Date, k: number): Promise<Ranked[]> {
    const vectors = await this.embedder.embed(queries);
    const dimension = this.embedder.dimension;
    return Promise.all(
      queries.map((_, q) => {
        const vector = Array.from(vectors.subarray(q * dimension, (q + 1) * dimension));
        return vector.some((x) => x !== 0) ? this.repository.vectorSearch(label, vector, this.embedder.id, asOf, k).then(toRanked) : [];
      }),
    );
  }

  private async fuse(dense: Ranked, lexical: Ranked): Promise<Ranked> {
    const lists = {
      dense: { ids: dense.map((hit) => hit.key), scores: dense.map((hit) => hit.score) },
      lexical: { ids: lexical.map((hit) => hit.key), scores: lexical.map((hit) => hit.score) },
    };
    let weights = { dense: this.fusion.denseWeight, lexical: this.fusion.lexicalWeight };
    if (this.fusion.method === 'adaptive') {
      weights = { ...weights, lexical: weights.lexical * topAgreement(lists.dense.ids, lists.lexical.ids) ** 2 };
    }
    const fused =
      this.fusion.method === 'rrf'
        ? await Fusion.rrf([lists.dense.ids, lists.lexical.ids], { weights: [weights.dense, weights.lexical] })
        : await Fusion.weightedSum(lists, weights);
    return fused.map((item) => ({ key: item.id, score: item.score }));
  }
}

/** The share of the first list's top ten that the second list's top ten also holds. */
export function topAgreement(first: readonly string[], second: readonly string[], depth = 10): number {
  const top = new Set(second.slice(0, depth));
  const head = first.slice(0, depth);
  return head.length === 0 ? 0 : head.filter((key) => top.has(key)).length / head.length;
}

function toRanked(candidates: ScoredUnitId[]): Ranked {
  return candidates.map((candidate) => ({ key: candidateKey(candidate), score: candidate.score }));
}

function rankOf(ranking: Ranked | undefined): Map<string, { rank: number; score: number }> {
  return new Map((ranking ?? []).map((hit, index) => [hit.key, { rank: index + 1, score: hit.score }]));
}
