import type { Database } from '../graph/database.js';
import { LeaseRepository } from '../graph/leaseRepository.js';
import type { RetrievalRepository, UnitLabel } from '../graph/retrievalRepository.js';
import type { Embedder } from '../embedding/index.js';

export const UNIT_LABELS: readonly UnitLabel[] = ['Passage', 'Sentence'];
/** Texts embedded and stored per transaction: small enough that progress shows every second or two. */
const BATCH = 128;
/** How long the store-wide embedding lease lasts without renewal (a batch renews it). */
const LEASE_SECONDS = 60;

/** The store holds vectors of another embedder than the one this process is configured with. */
export class EmbedderMismatchError extends Error {
  override name = 'EmbedderMismatchError';
  constructor(
    readonly storeEmbedderId: string,
    readonly configuredEmbedderId: string,
  ) {
    super(
      `this store's vectors were made by the embedder ${storeEmbedderId}, but this process is configured for ${configuredEmbedderId}. ` +
        'Every process of one store must use the same embedder: set CHRONOQL_EMBEDDER as the store was set up, ' +
        `or run \`chronoql reembed\` with the new setting to switch the store to ${configuredEmbedderId} (it re-embeds everything).`,
    );
  }
}

/** Makes this process's embedder the store's one (first use) or checks that it is; see EmbedderMismatchError. */
export async function claimStoreEmbedder(repository: RetrievalRepository, embedderId: string): Promise<void> {
  // A plain read settles the common case; only a store without an embedder takes the lock to claim.
  const { embedderId: current } = await repository.syncPoint();
  const stored = current ?? (await repository.claimEmbedder(embedderId));
  if (stored !== embedderId) throw new EmbedderMismatchError(stored, embedderId);
}

/** Units of every label waiting for a vector; with `validFrom`, only those of snapshots taken then or later. */
export async function countPendingUnits(repository: RetrievalRepository, validFrom: Date | null = null): Promise<number> {
  const counts = await Promise.all(UNIT_LABELS.map((label) => repository.countPendingEmbeddings(label, validFrom)));
  return counts.reduce((a, b) => a + b, 0);
}

export interface EmbeddingProgress {
  /** Units this job embedded in the current pass. */
  embedded: number;
  /** Time since the pass started. */
  elapsedMs: number;
  /** Units still waiting for a vector in the store (any process may be embedding them). */
  pending: number;
}

/**
 * Embeds every unit version that waits for a vector and stores the vectors in Neo4j, in small
 * batches, holding the store-wide lease so that only one process embeds at a time. Resumable by
 * construction: a unit stays pending until the transaction that stores its vector commits.
 */
export class EmbeddingJob {
  private prepared = false;

  constructor(
    private readonly db: Database,
    private readonly repository: RetrievalRepository,
    private readonly embedder: Embedder,
    private readonly owner: string,
    private readonly leases = new LeaseRepository(db),
  ) {}

  /**
   * One pass: embeds until nothing is pending. Returns how many units it embedded; 0 with
   * `leased: false` when another process holds the lease (it is doing the work).
   */
  async runPass(onProgress: (progress: EmbeddingProgress) => void, shouldStop: () => boolean): Promise<{ embedded: number; leased: boolean }> {
    await claimStoreEmbedder(this.repository, this.embedder.id);
    await this.prepare();
    let embedded = 0;
    const started = performance.now();
    if ((await this.countPending()) === 0) return { embedded, leased: true };
    if (!(await this.leases.acquire('embedding', this.owner, LEASE_SECONDS))) return { embedded, leased: false };
    try {
      // A batch of each label in turn, each newest first: a snapshot ingested during the pass has
      // its passages and sentences embedded before an older backlog of either.
      for (let found = true; found && !shouldStop();) {
        found = false;
        for (const label of UNIT_LABELS) {
          const batch = await this.repository.pendingEmbeddings(label, BATCH);
          if (batch.length === 0) continue;
          found = true;
          const vectors = await this.embedder.embed(
            batch.map((unit) => unit.text),
            'passage',
          );
          const d = this.embedder.dimension;
          const firstRowId = await this.repository.reserveRows(label, batch.length);
          const outcome = await this.repository.storeEmbeddings(
            label,
            this.embedder.id,
            firstRowId,
            batch.map((unit, row) => ({ id: unit.id, embedding: Array.from(vectors.subarray(row * d, (row + 1) * d)) })),
          );
          if (!outcome.stored) throw new EmbedderMismatchError(outcome.storeEmbedderId, this.embedder.id);
          embedded += batch.length;
          onProgress({ embedded, elapsedMs: performance.now() - started, pending: await this.countPending() });
          if (!(await this.leases.acquire('embedding', this.owner, LEASE_SECONDS))) return { embedded, leased: false };
        }
      }
    } finally {
      await this.leases.release('embedding', this.owner);
    }
    return { embedded, leased: true };
  }

  countPending(): Promise<number> {
    return countPendingUnits(this.repository);
  }

  /**
   * Once per process: vectors of any other embedder are marked pending (after `reembed`, or a
   * store from before embedders were recorded) and the Neo4j vector indexes are created.
   */
  private async prepare(): Promise<void> {
    if (this.prepared) return;
    for (const label of UNIT_LABELS) {
      await this.repository.markStaleEmbeddings(label, this.embedder.id);
      await this.repository.ensureVectorIndex(label, this.embedder.dimension, (cypher) => this.db.runSchemaStatement(cypher));
    }
    this.prepared = true;
  }
}
