import { join } from 'node:path';
import type { Database } from '../graph/database.js';
import { RetrievalRepository, type ScoredUnit, type UnitLabel, type UnitRecord } from '../graph/retrievalRepository.js';
import { indexStart, isValidAt } from '../graph/validity.js';
import { Fusion, MAX_K } from '../native/index.js';
import type { Logger } from '../server/logger.js';
import { BackgroundEmbedding, type EmbeddingStatus, type Neo4jConnectionSettings } from './backgroundEmbedding.js';
import { createEmbedder, embedderConfigFromEnv, type Embedder, type EmbedderConfig } from './embedders/index.js';
import { claimStoreEmbedder, EmbedderMismatchError } from './embeddingJob.js';
import { contentTerms, termCoverage } from '../text/language.js';
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
/** Hybrid search fuses this many candidates from each side (at least k). */
const FUSION_DEPTH = 30;

export interface SearchOptions {
  asOf: Date;
  k: number;
  mode: SearchMode;
  unit: SearchUnit;
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

/**
 * How hybrid search combines its two lists: `weighted` sums min-max-normalised scores with
 * fixed weights; `rrf` is reciprocal-rank fusion. `adaptive` first judges each query's lexical
 * list (see {@link LexicalEvidence}) and lets it count with `lexicalWeight` only when its top hit
 * holds enough of the question's words, stands out from the second and scores enough per word;
 * otherwise with `weakLexicalWeight`. A question worded unlike the text it asks about leaves
 * BM25 ranking passages by incidental words, and min-max normalisation would lift that off-topic
 * list to full weight.
 */
export interface FusionSettings {
  method: 'weighted' | 'rrf' | 'adaptive';
  denseWeight: number;
  lexicalWeight: number;
  /** RRF's rank constant: 1/(rrfK + rank). Default 60. */
  rrfK?: number;
  /** For `adaptive`: the least coverage of the lexical top hit. Default 1 (every content word). */
  minCoverage?: number;
  /**
   * For `adaptive`: how far BM25's top hit must stand above its second, as a share of its
   * score. Default 0. A template question whose words many passages share gives a flat BM25
   * list that ranks by chance.
   */
  minLexicalMargin?: number;
  /** For `adaptive`: the least BM25 score of the top hit per content word of the question. Default 0. */
  minScorePerTerm?: number;
  /** For `adaptive`: the lexical weight when the list does not count. Default 0 (dense search decides alone). */
  weakLexicalWeight?: number;
}

/**
 * Chosen by `chronoql bench fusion` on the tuning parts of a public QA set (SQuAD dev subset,
 * split by article), the demo fact questions and the paraphrase set, over RRF constants and
 * weights, weighted sums and the adaptive gate's thresholds: the smallest worst shortfall below
 * the better single retriever, then the best mean. Held-out results are in bench/results/README.md.
 */
export const DEFAULT_FUSION: FusionSettings = {
  method: 'adaptive',
  denseWeight: 0.4,
  lexicalWeight: 0.6,
  minCoverage: 0.6,
  minLexicalMargin: 0.05,
  minScorePerTerm: 1,
};

/**
 * How much a query's lexical list is worth, from its top hit: `coverage`, the share of the
 * question's content words the hit's search text (title and text) holds; `margin`, how far its
 * BM25 score stands above the second hit's, as a share of its own; `scorePerTerm`, its BM25
 * score per content word of the question.
 */
export interface LexicalEvidence {
  coverage: number;
  margin: number;
  scorePerTerm: number;
}

export function lexicalEvidence(query: string, lexical: ReadonlyArray<{ score: number; text: string; searchText?: string }>): LexicalEvidence {
  const top = lexical[0];
  if (!top) return { coverage: 0, margin: 0, scorePerTerm: 0 };
  const terms = contentTerms(query);
  return {
    coverage: termCoverage(terms, top.searchText ?? top.text),
    margin: lexical.length > 1 ? (top.score - lexical[1]!.score) / top.score : 1,
    scorePerTerm: top.score / Math.max(terms.size, 1),
  };
}

/**
 * The weights a fusion gives one query's two lists, given its lexical evidence and how many dense
 * candidates it has. Without dense candidates (nothing embedded yet) the lexical list counts
 * whatever its evidence: weighting it 0 would leave every hit at 0, in no order.
 */
export function fusionWeights(fusion: FusionSettings, evidence: LexicalEvidence, denseCandidates: number): { dense: number; lexical: number } {
  if (fusion.method !== 'adaptive' || denseCandidates === 0) return { dense: fusion.denseWeight, lexical: fusion.lexicalWeight };
  const counts =
    evidence.coverage >= (fusion.minCoverage ?? 1) &&
    evidence.margin >= (fusion.minLexicalMargin ?? 0) &&
    evidence.scorePerTerm >= (fusion.minScorePerTerm ?? 0);
  return { dense: fusion.denseWeight, lexical: counts ? fusion.lexicalWeight : (fusion.weakLexicalWeight ?? 0) };
}

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

/** One question of an adaptive re-retrieval batch. */
export interface ReRetrievalRequest {
  question: string;
  /** The first round's answer y. */
  answer: string;
  /** ω: how far the query moves from E(Q) toward E([Q : y]), clamped to [0, 1]. */
  omega: number;
  /** Row ids of the first round's passages, which the second round must not return. */
  excludeRowIds: readonly number[];
  /** E(Q) when the caller has it from this store's embedder (see SearchOptions.queryVectors). */
  questionVector?: Float32Array | null;
}

export interface RefreshReport {
  added: number;
  closed: number;
}

/** What /health and /metrics show of retrieval. */
export interface RetrievalStatus {
  embedder: string;
  /** Rows in the native vector index of each unit. */
  indexedRows: Record<SearchUnit, number>;
  lastSyncAt: Date | null;
  /** Why the last sync of the native indexes failed; null when it succeeded. */
  syncError: string | null;
  /** Null until this process starts embedding (a server, or a command that ingests). */
  embedding: EmbeddingStatus | null;
}

export interface RetrievalServiceOptions {
  db: Database;
  dataDir: string;
  /** How the background embedding worker reaches Neo4j (its own driver). */
  connection: Neo4jConnectionSettings;
  /** Default: from the environment (CHRONOQL_EMBEDDER and its settings). */
  embedderConfig?: EmbedderConfig;
  fusion?: FusionSettings;
  log?: Logger;
  /** Make the configured embedder the store's one even when the store has another (`chronoql reembed`). */
  replaceStoreEmbedder?: boolean;
}

/** While refreshing, a changed native index is saved at most this often (and always on close). */
const SAVE_INTERVAL_MS = 60_000;
/** Dense candidates asked of the native index beyond the depth needed, for hits the exact validity check drops. */
const VALIDITY_MARGIN = 16;
/** Only the first words of a query are searched: a megabyte of text must not reach Lucene or the encoder. */
export const MAX_QUERY_TERMS = 64;
/**
 * Lucene refuses a query of more than 1,024 clauses, and its analyzer splits one long "word" at
 * punctuation and every 255 characters: 1,000 characters make at most about 500 tokens.
 */
const MAX_QUERY_CHARS = 1_000;

/** The first MAX_QUERY_TERMS whitespace-separated words of a query, at most MAX_QUERY_CHARS long. */
export function queryTerms(query: string): string {
  return query.split(/\s+/, MAX_QUERY_TERMS + 1).slice(0, MAX_QUERY_TERMS).join(' ').slice(0, MAX_QUERY_CHARS);
}

/**
 * The retrieval layer: keeps every passage and sentence version embedded (in Neo4j, by a
 * background worker) and in the native vector indexes (time-filtered in the kernel), and answers
 * dense, lexical (Neo4j fulltext, BM25), hybrid and Neo4j-vector searches as of an instant.
 */
export class RetrievalService {
  private indexes: Map<SearchUnit, UnitVectorIndex> | undefined;
  private background: BackgroundEmbedding | undefined;
  private refreshing: Promise<RefreshReport> | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private lastSyncAt: Date | null = null;
  private syncError: string | null = null;
  private closed = false;

  private constructor(
    private readonly repository: RetrievalRepository,
    private readonly embedder: Embedder,
    private readonly embedderConfig: EmbedderConfig,
    private readonly connection: Neo4jConnectionSettings,
    private readonly indexDirectory: string,
    private readonly fusion: FusionSettings,
    private readonly log: Logger | undefined,
  ) {}

  /**
   * Loads the configured embedder (fetching a pretrained model on first use) and checks it is
   * the store's: the first process to open a store chooses its embedder for every later one.
   */
  static async open(options: RetrievalServiceOptions): Promise<RetrievalService> {
    const config = options.embedderConfig ?? embedderConfigFromEnv(process.env, { dataDir: options.dataDir });
    const log = options.log;
    const embedder = await createEmbedder({ ...config, log: (message: string) => log?.info(message) } as EmbedderConfig);
    const repository = new RetrievalRepository(options.db);
    try {
      if (options.replaceStoreEmbedder) await repository.claimEmbedder(embedder.id, { replace: true });
      else await claimStoreEmbedder(repository, embedder.id);
    } catch (error) {
      await embedder.close?.();
      throw error;
    }
    const indexDirectory = join(options.dataDir, 'indexes', embedder.id.replace(/[^\w.@-]+/g, '_'));
    return new RetrievalService(repository, embedder, config, options.connection, indexDirectory, options.fusion ?? DEFAULT_FUSION, log);
  }

  get embedderId(): string {
    return this.embedder.id;
  }

  status(): RetrievalStatus {
    return {
      embedder: this.embedder.id,
      indexedRows: { PASSAGE: this.indexes?.get(SearchUnit.PASSAGE)?.size ?? 0, SENTENCE: this.indexes?.get(SearchUnit.SENTENCE)?.size ?? 0 },
      lastSyncAt: this.lastSyncAt,
      syncError: this.syncError,
      embedding: this.background?.status() ?? null,
    };
  }

  /** Starts the background embedding worker (once); it then embeds whatever any process ingests. */
  startEmbedding(): BackgroundEmbedding {
    if (this.closed) throw new Error('retrieval service: closed');
    this.background ??= BackgroundEmbedding.start({
      connection: this.connection,
      embedder: this.embedderConfig,
      log: (level, message, fields) => this.log?.[level](fields ?? {}, message),
    });
    return this.background;
  }

  /**
   * Waits until every unit version in the store has its vector, embedding in the background
   * worker (or, while another process holds the embedding lease, watching it do the work), then
   * brings the native indexes up to date: everything ingested before the call is searchable after it.
   */
  async catchUp(onProgress?: (done: number, total: number) => void): Promise<RefreshReport & { embedded: number }> {
    const background = this.startEmbedding();
    let total = 0;
    const report = (): void => {
      const { pending } = background.status();
      total = Math.max(total, pending);
      onProgress?.(total - pending, total);
    };
    const ticker = onProgress ? setInterval(report, 500) : undefined;
    const embeddedBefore = background.status().embeddedTotal;
    try {
      for (;;) {
        const pass = await background.pass();
        if (pass.pending === 0) break;
        // Another process holds the lease and is embedding: look again shortly.
        if (!pass.leased) await new Promise((resolve) => setTimeout(resolve, 500));
      }
      report();
    } finally {
      clearInterval(ticker);
    }
    const embedded = background.status().embeddedTotal - embeddedBefore;
    // A sync already running may have read Neo4j before the last vectors were stored: after it, sync again.
    await this.refreshing?.catch(() => undefined);
    return { embedded, ...(await this.refresh()) };
  }

  /** Brings the native indexes up to date with the vectors stored in Neo4j; concurrent calls share one run. */
  refresh(): Promise<RefreshReport> {
    this.refreshing ??= this.runRefresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /**
   * Embeds in the background and syncs the native indexes every `intervalMs` until close(): a
   * server uses this to follow snapshots ingested by itself and by other processes.
   */
  keepFresh(intervalMs: number, report: (outcome: RefreshReport | Error) => void): void {
    this.startEmbedding();
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
   * runs its lexical search. Every dense hit is checked against asOf to the instant.
   */
  async batchSearch(rawQueries: readonly string[], options: SearchOptions): Promise<SearchHit[][]> {
    const queries = rawQueries.map(queryTerms);
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
      const requested = depth + VALIDITY_MARGIN;
      const denseRows = await this.denseSearch(queries, options.unit, asOf, requested, options.queryVectors);
      // Versions whose valid time ends or starts within asOf's minute pass the native index and
      // are dropped here; when so many were dropped that fewer than `depth` remain of a full
      // page, that query is searched again, deeper.
      const validDense = async (q: number, units: ReadonlyMap<number, UnitRecord>): Promise<ScoredUnit[]> => {
        const page = validPage(denseRows[q]!, units, asOf, depth, requested);
        return page.short ? this.deeperDense(queries[q]!, options.unit, asOf, depth, requested * 4) : page.units;
      };
      if (mode === SearchMode.DENSE) {
        const units = await this.repository.unitsByRowIds(label, [...new Set(denseRows.flat().map((row) => row.rowId))]);
        lists = await Promise.all(
          queries.map(async (_, q) => {
            const dense = await validDense(q, units);
            return { ranking: dense, dense };
          }),
        );
      } else {
        lists = await Promise.all(
          queries.map(async (query, q) => {
            const { hits, loaded } = await this.repository.lexicalSearch(label, query, asOf, depth, denseRows[q]!.map((row) => row.rowId));
            const dense = await validDense(q, loaded);
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

  /**
   * GrowOVER's adaptive re-retrieval for a batch of questions, in one native scan: passages
   * ranked by (1-ω)·sim(E(Q), E(D)) + ω·sim(E([Q : y]), E(D)), where y is the first round's
   * answer, leaving out the first round's passages. Hits are checked against asOf to the instant.
   */
  async reRetrieve(requests: readonly ReRetrievalRequest[], asOf: Date, k: number): Promise<SearchHit[][]> {
    if (requests.length === 0) return [];
    const index = (await this.openIndexes()).get(SearchUnit.PASSAGE)!;
    const d = this.embedder.dimension;
    const questions = await this.embedQueries(
      requests.map((request) => queryTerms(request.question)),
      requests.map((request) => request.questionVector ?? null),
    );
    const withAnswers = await this.embedder.embed(
      requests.map((request) => queryTerms(`${request.question} : ${request.answer}`)),
      'query',
    );
    const first = new Float32Array(requests.length * d);
    const second = new Float32Array(requests.length * d);
    requests.forEach((_, q) => {
      if (questions[q]) first.set(questions[q]!, q * d);
      second.set(withAnswers.subarray(q * d, (q + 1) * d), q * d);
    });
    const requested = Math.min(k + VALIDITY_MARGIN, MAX_K);
    const results =
      index.size === 0
        ? requests.map(() => ({ ids: new Uint32Array(), scores: new Float32Array() }))
        : await index.searchArr(
            first,
            second,
            Float32Array.from(requests, (request) => Math.min(1, Math.max(0, request.omega))),
            requested,
            new Int32Array(requests.length).fill(indexStart(asOf)),
            requests.map((request) => Uint32Array.from(request.excludeRowIds)),
          );
    const rows = results.map((result) => Array.from(result.ids, (rowId, i) => ({ rowId, score: result.scores[i]! })));
    const units = await this.repository.unitsByRowIds('Passage', [...new Set(rows.flat().map((row) => row.rowId))]);
    return rows.map((list) =>
      validPage(list, units, asOf, k, requested).units.map(({ score, ...unit }, position) => ({
        ...unit,
        unit: SearchUnit.PASSAGE,
        rank: position + 1,
        score,
        denseScore: score,
        denseRank: position + 1,
        lexicalScore: null,
        lexicalRank: null,
      })),
    );
  }

  /** Of these names, those the store has never heard of: no passage of any time mentions them. */
  namesNeverMentioned(names: readonly string[]): Promise<string[]> {
    return this.repository.namesNeverMentioned(names);
  }

  /** Passages by id, for evidence handed back by a client (a conversation's earlier turns). */
  unitsByIds(unit: SearchUnit, ids: readonly string[]): Promise<Map<string, UnitRecord>> {
    return this.repository.unitsByIds(LABEL[unit], ids);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.refreshTimer);
    await this.background?.close();
    await this.refreshing?.catch(() => undefined);
    if (this.indexes) {
      for (const index of this.indexes.values()) {
        await index.save();
        index.close();
      }
    }
    await this.embedder.close?.();
  }

  private async runRefresh(): Promise<RefreshReport> {
    try {
      const point = await this.repository.syncPoint();
      // Someone switched the store to another embedder (`chronoql reembed`): this process's vectors no longer match it.
      if (point.embedderId !== null && point.embedderId !== this.embedder.id) throw new EmbedderMismatchError(point.embedderId, this.embedder.id);
      const indexes = await this.openIndexes(point.storeId);
      let added = 0;
      let closed = 0;
      for (const index of indexes.values()) {
        const outcome = await index.sync(point);
        added += outcome.added;
        closed += outcome.closed;
        await index.save(SAVE_INTERVAL_MS);
      }
      this.lastSyncAt = point.now;
      this.syncError = null;
      return { added, closed };
    } catch (error) {
      this.syncError = (error as Error).message;
      throw error;
    }
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
            onDiscard: (reason) => this.log?.warn(reason),
          }),
        );
      }
      this.indexes = opened;
    }
    return this.indexes;
  }

  /** One query's `depth` nearest units valid at asOf, asking the native index for `k` rows and more until enough survive the exact check. */
  private async deeperDense(query: string, unit: SearchUnit, asOf: Date, depth: number, k: number): Promise<ScoredUnit[]> {
    const limit = Math.min(k, MAX_K);
    const rows = (await this.denseSearch([query], unit, asOf, limit))[0]!;
    const page = validPage(rows, await this.repository.unitsByRowIds(LABEL[unit], rows.map((row) => row.rowId)), asOf, depth, limit);
    return page.short && limit < MAX_K ? this.deeperDense(query, unit, asOf, depth, limit * 4) : page.units;
  }

  /** The queries' vectors, and which of them can rank anything (a text with no known word embeds to zero). */
  private async embedQueries(queries: readonly string[], given: ReadonlyArray<Float32Array | null> = []): Promise<Array<Float32Array | null>> {
    const missing = queries.flatMap((_, q) => (given[q] ? [] : [q]));
    const embedded = missing.length === 0 ? new Float32Array(0) : await this.embedder.embed(missing.map((q) => queries[q]!), 'query');
    const d = this.embedder.dimension;
    const vectors = queries.map((_, q) => given[q] ?? null);
    missing.forEach((q, i) => (vectors[q] = embedded.subarray(i * d, (i + 1) * d)));
    return vectors.map((vector) => (vector && vector.some((x) => x !== 0) ? vector : null));
  }

  /** Row numbers and scores of each query's nearest units valid at asOf, from the native index (to the minute). */
  private async denseSearch(queries: readonly string[], unit: SearchUnit, asOf: Date, k: number, given?: ReadonlyArray<Float32Array | null>): Promise<DenseRow[][]> {
    const index = (await this.openIndexes()).get(unit)!;
    const vectors = await this.embedQueries(queries, given);
    const answerable = vectors.flatMap((vector, q) => (vector ? [q] : []));
    const results =
      answerable.length === 0 || index.size === 0
        ? []
        : await index.search(
            Float32Array.from(answerable.flatMap((q) => Array.from(vectors[q]!))),
            k,
            new Int32Array(answerable.length).fill(indexStart(asOf)),
          );
    const rankings: DenseRow[][] = queries.map(() => []);
    answerable.forEach((q, position) => {
      const result = results[position];
      if (result) rankings[q] = Array.from(result.ids, (rowId, i) => ({ rowId, score: result.scores[i]! }));
    });
    return rankings;
  }

  private async neo4jVectorSearch(queries: readonly string[], label: UnitLabel, asOf: Date, k: number): Promise<ScoredUnit[][]> {
    const vectors = await this.embedQueries(queries);
    return Promise.all(vectors.map((vector) => (vector ? this.repository.vectorSearch(label, Array.from(vector), this.embedder.id, asOf, k) : [])));
  }

  private fuse(query: string, dense: ScoredUnit[], lexical: ScoredUnit[]): Promise<ScoredUnit[]> {
    return fuseCandidates(query, dense, lexical, this.fusion);
  }
}

/** One query's candidates from one retriever, best first. */
type Candidates<T> = ReadonlyArray<T & { id: string; score: number; text: string; searchText?: string }>;

/** Fuses one query's dense and lexical candidates into one ranking, each item scored by the fusion. */
export async function fuseCandidates<T>(query: string, dense: Candidates<T>, lexical: Candidates<T>, fusion: FusionSettings): Promise<Array<T & { id: string; score: number; text: string }>> {
  return fuseWithWeights(dense, lexical, fusion, fusionWeights(fusion, lexicalEvidence(query, lexical), dense.length));
}

/** Fuses one query's candidates with the weights its lexical evidence earned (so a benchmark can judge the evidence once per query). */
export async function fuseWithWeights<T>(
  dense: Candidates<T>,
  lexical: Candidates<T>,
  fusion: FusionSettings,
  weights: { dense: number; lexical: number },
): Promise<Array<T & { id: string; score: number; text: string }>> {
  const lists = {
    dense: { ids: dense.map((hit) => hit.id), scores: dense.map((hit) => hit.score) },
    lexical: { ids: lexical.map((hit) => hit.id), scores: lexical.map((hit) => hit.score) },
  };
  const fused =
    fusion.method === 'rrf'
      ? await Fusion.rrf([lists.dense.ids, lists.lexical.ids], { k: fusion.rrfK, weights: [weights.dense, weights.lexical] })
      : await Fusion.weightedSum(lists, weights);
  // The addon breaks ties by id. Exact ties are common at the tail: min-max puts each list's last
  // hit at 0, and a list weighted 0 scores all its hits 0. Order them as the retrievers did instead.
  const [primary, secondary] = weights.lexical > weights.dense ? [lists.lexical.ids, lists.dense.ids] : [lists.dense.ids, lists.lexical.ids];
  const byPrimary = positions(primary);
  const bySecondary = positions(secondary);
  const position = (ranks: Map<string, number>, id: string): number => ranks.get(id) ?? Number.MAX_SAFE_INTEGER;
  fused.sort((a, b) => b.score - a.score || position(byPrimary, a.id) - position(byPrimary, b.id) || position(bySecondary, a.id) - position(bySecondary, b.id));
  const units = new Map([...lexical, ...dense].map((hit) => [hit.id, hit]));
  return fused.map((item) => ({ ...units.get(item.id)!, score: item.score }));
}

function positions(ids: readonly string[]): Map<string, number> {
  return new Map(ids.map((id, i) => [id, i]));
}

/**
 * A dense page's units valid at asOf to the instant, at most `depth`, and whether it came up
 * short: fewer than `depth` survived although the index filled the page (`requested` rows), so
 * a deeper search could find more.
 */
function validPage(rows: readonly DenseRow[], units: ReadonlyMap<number, UnitRecord>, asOf: Date, depth: number, requested: number): { units: ScoredUnit[]; short: boolean } {
  const valid = withUnits(rows, units).filter((unit) => isValidAt(unit, asOf));
  return { units: valid.slice(0, depth), short: valid.length < depth && rows.length >= requested };
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
