import { outsideRequestScope } from '../platform/requestScope.js';
import { join } from 'node:path';
import { deepenUntilEnoughValid, speaksOf } from '../domain/time.js';
import { MAX_K } from '../native/index.js';
import { setTimeout as delay } from 'node:timers/promises';
import type { Database } from '../graph/database.js';
import { RetrievalRepository, type UnitRecord } from '../graph/retrievalRepository.js';
import type { Logger } from '../platform/logger.js';
import { BackgroundEmbedding, type EmbeddingPass, type EmbeddingStatus, type Neo4jConnectionSettings } from './backgroundEmbedding.js';
import { createEmbedder, type Embedder, type EmbedderConfig } from '../embedding/index.js';
import { admitAll, type Admission } from '../platform/fairShares.js';
import { admittedEmbedder } from './admittedEmbedder.js';
import { NativeDenseRetriever, type ReRetrievalRequest } from './denseRetriever.js';
import { claimStoreEmbedder, countPendingUnits, EmbedderMismatchError } from './embeddingJob.js';
import { DEFAULT_FUSION, HybridRetriever, type FusionSettings } from './fusion.js';
import { LexicalRetriever } from './lexicalRetriever.js';
import { Neo4jVectorRetriever } from './neo4jVectorRetriever.js';
import { queryTerms, SearchMode, SearchUnit, toSearchHits, UNIT_LABEL, type Retriever, type SearchHit, type SearchOptions } from './retriever.js';
import { UnitVectorIndex } from './unitIndex.js';

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
  /** The store's embedder (CHRONOQL_EMBEDDER and its settings). */
  embedderConfig: EmbedderConfig;
  fusion?: FusionSettings;
  log?: Logger;
  /** Make the configured embedder the store's one even when the store has another (`chronoql reembed`). */
  replaceStoreEmbedder?: boolean;
  /** Runs each unit of search work (a query's embedding, a native scan) when its caller's turn comes. */
  admit?: Admission;
}

/** While refreshing, a changed native index is saved at most this often (and always on close). */
const SAVE_INTERVAL_MS = 60_000;
/** How often a catch-up looks at what is still waiting for a vector. */
const POLL_MS = 500;

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
  private readonly dense: NativeDenseRetriever;
  private readonly retrievers: Record<SearchMode, Retriever>;

  private constructor(
    private readonly repository: RetrievalRepository,
    private readonly embedder: Embedder,
    private readonly embedderConfig: EmbedderConfig,
    private readonly connection: Neo4jConnectionSettings,
    private readonly indexDirectory: string,
    fusion: FusionSettings,
    private readonly log: Logger | undefined,
    admit: Admission,
  ) {
    const index = async (unit: SearchUnit): Promise<UnitVectorIndex> => (await this.openIndexes()).get(unit)!;
    this.dense = new NativeDenseRetriever(repository, embedder, index, admit);
    const lexical = new LexicalRetriever(repository);
    this.retrievers = {
      [SearchMode.DENSE]: this.dense,
      [SearchMode.LEXICAL]: lexical,
      [SearchMode.HYBRID]: new HybridRetriever(this.dense, lexical, fusion),
      [SearchMode.NEO4J_VECTOR]: new Neo4jVectorRetriever(repository, embedder),
    };
  }

  /**
   * Loads the configured embedder (fetching a pretrained model on first use) and checks it is
   * the store's: the first process to open a store chooses its embedder for every later one.
   */
  static async open(options: RetrievalServiceOptions): Promise<RetrievalService> {
    const config = options.embedderConfig;
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
    const admit = options.admit ?? admitAll;
    return new RetrievalService(
      repository,
      admittedEmbedder(embedder, config.kind, admit),
      config,
      options.connection,
      indexDirectory,
      options.fusion ?? DEFAULT_FUSION,
      log,
      admit,
    );
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

  /** Asks the background worker (started if need be) for a pass now, so units just written are embedded without waiting for its next look. */
  embedSoon(): void {
    if (this.closed) return;
    // A failed pass is logged by the worker and tried again at its next look.
    this.startEmbedding()
      .pass()
      .catch(() => undefined);
  }

  /**
   * Waits until every unit version in the store has its vector (with `validFrom`, every unit of
   * the snapshots taken then or later: an ingest waits for its own units only, which the worker
   * embeds newest first), embedding in the background worker or, while another process holds the
   * embedding lease, watching it do the work; then brings the native indexes up to date: what
   * was waited for is searchable after the call. `waitedFor` counts the units that were waiting;
   * `embedded`, those this process embedded meanwhile (a scoped wait may miss its last batch).
   */
  async catchUp(
    onProgress?: (done: number, total: number) => void,
    validFrom: Date | null = null,
  ): Promise<RefreshReport & { embedded: number; waitedFor: number }> {
    const background = this.startEmbedding();
    const embeddedBefore = background.status().embeddedTotal;
    // A pass this wait stops watching (it failed, or only this snapshot's units were waited for) must not reject unobserved.
    const nextPass = (afterMs: number): Promise<EmbeddingPass> => {
      const next = afterMs > 0 ? delay(afterMs).then(() => background.pass()) : background.pass();
      next.catch(() => undefined);
      return next;
    };
    let total = 0;
    let pass = nextPass(0);
    for (;;) {
      const pending = await countPendingUnits(this.repository, validFrom);
      total = Math.max(total, pending);
      onProgress?.(total - pending, total);
      if (pending === 0) break;
      const finished = await Promise.race([pass, delay(POLL_MS).then(() => null)]);
      // Another process holds the lease and is embedding: look again shortly.
      if (finished) pass = nextPass(finished.leased ? 0 : POLL_MS);
    }
    // With nothing left the pass ends at once (and its last batch is counted); a scoped wait leaves
    // it to go on with older units.
    if (validFrom === null) await pass;
    const embedded = background.status().embeddedTotal - embeddedBefore;
    // A sync already running may have read Neo4j before the last vectors were stored: after it, sync again.
    await this.refreshing?.catch(() => undefined);
    return { embedded, waitedFor: total, ...(await this.refresh()) };
  }

  /**
   * Whether every passage and sentence version of the snapshots taken at `takenAt` or later can
   * be found by every search mode here: each has its vector, and a sync of this process's native
   * indexes that started after that (awaited, and shared with other callers) has taken them in.
   */
  async searchableFrom(takenAt: Date): Promise<boolean> {
    if ((await countPendingUnits(this.repository, takenAt)) > 0) return false;
    // A sync already running may have read Neo4j before the last vectors were stored: after it, sync again.
    await this.refreshing?.catch(() => undefined);
    // A failed sync leaves them out of the dense index (/health says why): not searchable yet.
    return this.refresh().then(
      () => true,
      () => false,
    );
  }

  /** Brings the native indexes up to date with the vectors stored in Neo4j; concurrent calls share one run. */
  refresh(): Promise<RefreshReport> {
    this.refreshing ??= outsideRequestScope(() => this.runRefresh()).finally(() => {
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
   * Many queries at once, by the mode's retriever; every hit is valid at asOf to the instant and,
   * with `during`, speaks of that period.
   */
  async batchSearch(rawQueries: readonly string[], options: SearchOptions): Promise<SearchHit[][]> {
    const queries = rawQueries.map((text, q) => ({ text: queryTerms(text), vector: options.queryVectors?.[q] ?? null }));
    const retriever = this.retrievers[options.mode];
    const where = { asOf: options.asOf, unit: options.unit };
    const during = options.during ?? null;
    if (!during) return (await retriever.search(queries, { ...where, k: options.k })).map((list) => toSearchHits(list, options.unit, options.k));
    // No index ranks by event time: it is checked on the ranked units, deepened as valid time is where an index knows none.
    const lists = await Promise.all(
      queries.map((query) =>
        deepenUntilEnoughValid(options.k, { first: options.k * 4, limit: MAX_K }, async (candidates) => {
          const [ranked] = await retriever.search([query], { ...where, k: candidates });
          const ranking = ranked!.ranking.filter((unit) => speaksOf(unit.eventTimes, during));
          return { result: { ...ranked, ranking }, valid: ranking.length, scanned: ranked!.ranking.length };
        }),
      ),
    );
    return lists.map((list) => toSearchHits(list, options.unit, options.k));
  }

  /** GrowOVER's adaptive re-retrieval (see NativeDenseRetriever.reRetrieve). */
  reRetrieve(requests: readonly ReRetrievalRequest[], asOf: Date, k: number): Promise<SearchHit[][]> {
    return this.dense.reRetrieve(requests, asOf, k);
  }

  /** Of these names, those the store has never heard of: no passage of any time mentions them. */
  namesNeverMentioned(names: readonly string[]): Promise<string[]> {
    return this.repository.namesNeverMentioned(names);
  }

  /** Every version of these articles' passages or sentences the store knew as of `asOf`, current or not (at most `limit`). */
  unitsKnownAsOf(unit: SearchUnit, articleIds: readonly string[], asOf: Date, limit: number): Promise<UnitRecord[]> {
    return this.repository.unitsKnownAsOf(UNIT_LABEL[unit], articleIds, asOf, limit);
  }

  /** Passages by id, for evidence handed back by a client (a conversation's earlier turns). */
  unitsByIds(unit: SearchUnit, ids: readonly string[]): Promise<Map<string, UnitRecord>> {
    return this.repository.unitsByIds(UNIT_LABEL[unit], ids);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.refreshTimer);
    await this.background?.close();
    await this.refreshing?.catch(() => undefined);
    if (this.indexes) {
      for (const index of this.indexes.values()) {
        // What is not saved is synced again from Neo4j at the next start.
        await index.save(0, true).catch((error: Error) => this.log?.warn({ err: error }, 'native index not saved at close'));
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
      }
      this.lastSyncAt = point.now;
      this.syncError = null;
      // After every sync, so a save that fails (a full disk) leaves the indexes searchable and current.
      for (const index of indexes.values()) await index.save(SAVE_INTERVAL_MS);
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
      for (const unit of Object.values(SearchUnit)) {
        opened.set(
          unit,
          await UnitVectorIndex.open({
            label: UNIT_LABEL[unit],
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
}
