import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { RetrievalRepository, SyncPoint, UnitLabel } from '../graph/retrievalRepository.js';
import { INDEX_TIME_UNIT, indexEnd, indexInterval } from '../domain/time.js';
import { VectorIndex, type QueryResult } from '../native/index.js';

/**
 * How far back each sync re-reads, in transaction time. A unit embedded or closed by a
 * transaction that started before the previous sync but committed after it is still seen;
 * re-reading is harmless because rows already indexed are skipped and closures repeat.
 */
const SYNC_OVERLAP_MS = 30_000;
const PAGE = 2000;
/**
 * A save's files younger than this are spared by another save's clean-up: they may be a
 * concurrent save in progress, in this process or another one sharing the data directory.
 */
const PRUNE_AFTER_MS = 60_000;
/** After a failed save (a full disk), the next waits 2 s, 4 s, 8 s … up to this. */
const SAVE_RETRY_MAX_MS = 10 * 60_000;
const SAVE_RETRY_FIRST_MS = 2_000;

interface Sidecar {
  /** The Neo4j store's retrieval identity the index was built from. */
  storeId: string;
  embedderId: string;
  dimension: number;
  /** The unit of the index's int32 valid times (see domain/time.ts). */
  timeUnit: string;
  /** Server time at the start of the last completed sync (ISO). */
  watermark: string;
  /** The directory, beside the sidecar, that holds this save's vectors and row set. */
  generation: string;
}

/** Row numbers already in the index, one bit each, so a sync never adds a row twice. */
class RowSet {
  private bits = new Uint8Array(1024);

  has(row: number): boolean {
    return row < this.bits.length * 8 && (this.bits[row >>> 3]! & (1 << (row & 7))) !== 0;
  }

  add(row: number): void {
    if (row >= this.bits.length * 8) {
      const grown = new Uint8Array(Math.max(this.bits.length * 2, (row >>> 3) + 1));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[row >>> 3]! |= 1 << (row & 7);
  }

  toBuffer(): Buffer {
    return Buffer.from(this.bits.buffer, this.bits.byteOffset, this.bits.byteLength);
  }

  static from(buffer: Buffer): RowSet {
    const set = new RowSet();
    set.bits = new Uint8Array(buffer);
    return set;
  }
}

function isZero(vector: ArrayLike<number>): boolean {
  for (let i = 0; i < vector.length; i += 1) if (vector[i] !== 0) return false;
  return true;
}

/**
 * The native vector index of one kind of retrieval unit, kept in step with Neo4j: vectors
 * embedded since the last sync are added, versions closed since then are invalidated. It is
 * saved next to the Neo4j data so a restart does not rebuild it, and rebuilt from the
 * embeddings stored in Neo4j when the file is missing or belongs to another embedder.
 */
export class UnitVectorIndex {
  /** Generations this object saved: finished, so the next save may remove them at once. */
  private readonly saved = new Set<string>();
  /** When the index first changed after its last save (ms since the epoch); null while the saved files are current. */
  private changedAt: number | null = null;
  /** Saves that failed in a row, and when the next may be tried (ms since the epoch). */
  private failedSaves = 0;
  private nextSaveAt = 0;

  private constructor(
    readonly label: UnitLabel,
    private index: VectorIndex,
    private rows: RowSet,
    private watermark: Date | null,
    private storeId: string,
    private readonly embedderId: string,
    private readonly directory: string,
    private readonly repository: RetrievalRepository,
  ) {}

  static async open(options: {
    label: UnitLabel;
    embedderId: string;
    dimension: number;
    directory: string;
    repository: RetrievalRepository;
    storeId: string;
    /** A saved index that cannot be read (corrupt, older format) is rebuilt from Neo4j; this hears why. */
    onDiscard?: (reason: string) => void;
  }): Promise<UnitVectorIndex> {
    const { label, embedderId, dimension, directory, repository, storeId } = options;
    const sidecar = await readSidecar(UnitVectorIndex.files(directory, label).sidecar);
    if (
      sidecar &&
      sidecar.storeId === storeId &&
      sidecar.embedderId === embedderId &&
      sidecar.dimension === dimension &&
      sidecar.timeUnit === INDEX_TIME_UNIT
    ) {
      try {
        if (typeof sidecar.generation !== 'string' || basename(sidecar.generation) !== sidecar.generation) throw new Error('saved in an older layout');
        const index = await VectorIndex.load(join(directory, sidecar.generation, 'vectors'));
        const rows = RowSet.from(await readFile(join(directory, sidecar.generation, 'rows')));
        return new UnitVectorIndex(label, index, rows, new Date(sidecar.watermark), storeId, embedderId, directory, repository);
      } catch (error) {
        options.onDiscard?.(`the saved ${label} index cannot be used (${(error as Error).message}); rebuilding it from Neo4j`);
      }
    }
    return new UnitVectorIndex(label, UnitVectorIndex.empty(dimension), new RowSet(), null, storeId, embedderId, directory, repository);
  }

  private static empty(dimension: number): VectorIndex {
    return VectorIndex.create({ dimension, metric: 'cosine' });
  }

  get size(): number {
    return this.index.size;
  }

  get memoryBytes(): number {
    return this.index.memoryBytes;
  }

  /** Brings the index up to date with Neo4j as of `point`; returns how many rows were added and closed. */
  async sync(point: SyncPoint): Promise<{ added: number; closed: number }> {
    const { now: startedAt, storeId } = point;
    if (storeId !== this.storeId) {
      // The store was emptied (or replaced) under us: start again from what it holds now.
      this.index.close();
      this.index = UnitVectorIndex.empty(this.index.dimension);
      this.rows = new RowSet();
      this.watermark = null;
      this.storeId = storeId;
    }
    const since = this.watermark && new Date(this.watermark.getTime() - SYNC_OVERLAP_MS);
    let added = 0;
    for (let afterRowId = 0; ;) {
      const page = await this.repository.embeddedUnits(this.label, this.embedderId, { since, afterRowId, limit: PAGE });
      if (page.length === 0) break;
      afterRowId = page[page.length - 1]!.rowId;
      // A text with no known word embeds to zero, which cosine cannot rank: such units are left to lexical search.
      const fresh = page.filter((unit) => !this.rows.has(unit.rowId) && !isZero(unit.embedding));
      if (fresh.length > 0) {
        const intervals = fresh.map(indexInterval);
        await this.index.addBatch({
          ids: Uint32Array.from(fresh, (unit) => unit.rowId),
          vectors: fresh.map((unit) => unit.embedding),
          validFrom: Int32Array.from(intervals, (interval) => interval.validFrom),
          validTo: intervals.map((interval) => interval.validTo),
        });
        for (const unit of fresh) this.rows.add(unit.rowId);
        added += fresh.length;
      }
      if (page.length < PAGE) break;
    }
    let closed = 0;
    if (since) {
      const closures = (await this.repository.closedSince(this.label, since)).filter((unit) => this.rows.has(unit.rowId));
      if (closures.length > 0) {
        closed = await this.index.invalidate(
          closures.map((unit) => unit.rowId),
          closures.map((unit) => indexEnd(unit.validTo)),
        );
      }
    }
    this.watermark = startedAt;
    if (added + closed > 0) this.changedAt ??= Date.now();
    return { added, closed };
  }

  /** Nearest rows valid at `asOf` in index time (whole minutes: callers re-check exact instants). */
  search(queries: Float32Array, k: number, asOf: Int32Array, exclude?: ReadonlyArray<ArrayLike<number> | null>): Promise<QueryResult[]> {
    return this.index.search(queries, k, { asOf, exclude });
  }

  /** Adaptive re-retrieval: rows nearest to (1-ω)·first + ω·second, valid at `asOf`, none of `exclude`. */
  searchArr(
    first: Float32Array,
    second: Float32Array,
    omega: Float32Array,
    k: number,
    asOf: Int32Array,
    exclude: ReadonlyArray<ArrayLike<number>>,
  ): Promise<QueryResult[]> {
    return this.index.searchArr(first, second, omega, k, { asOf, exclude });
  }

  /**
   * Writes the index and its row set into a new generation directory, then points the sidecar
   * (with the watermark) at it in one rename. A server and a CLI ingest sharing the data
   * directory may save at once: each writes only files of its own until that rename, so a
   * reader always finds a vector file and a row set from the same save. Nothing is written
   * unless the index changed more than `unsavedForMs` ago: a save rewrites the whole index
   * (about a second for 300,000 rows of 384 floats), and one that falls behind costs only a
   * longer sync from Neo4j at the next start. A failed save removes what it wrote and holds
   * back the next with a growing delay (`force` tries at once: a closing process has one chance).
   */
  async save(unsavedForMs = 0, force = false): Promise<void> {
    if (!this.watermark || this.changedAt === null || Date.now() - this.changedAt < unsavedForMs) return;
    if (!force && Date.now() < this.nextSaveAt) return;
    const files = UnitVectorIndex.files(this.directory, this.label);
    const generation = `${files.prefix}${randomUUID()}`;
    try {
      await this.writeGeneration(files, generation);
    } catch (error) {
      await rm(join(this.directory, generation), { recursive: true, force: true }).catch(() => {});
      this.failedSaves += 1;
      this.nextSaveAt = Date.now() + Math.min(SAVE_RETRY_MAX_MS, SAVE_RETRY_FIRST_MS * 2 ** (this.failedSaves - 1));
      throw new Error(
        `saving the ${this.label} index failed (${(error as Error).message}); the next try is in ${Math.round((this.nextSaveAt - Date.now()) / 1000)} s`,
        { cause: error },
      );
    }
    this.failedSaves = 0;
    this.nextSaveAt = 0;
    this.changedAt = null;
    this.saved.add(generation);
    await this.prune(files);
  }

  private async writeGeneration(files: { sidecar: string; prefix: string }, generation: string): Promise<void> {
    await mkdir(join(this.directory, generation), { recursive: true });
    await this.index.save(join(this.directory, generation, 'vectors'));
    await writeFile(join(this.directory, generation, 'rows'), this.rows.toBuffer());
    const sidecar: Sidecar = {
      storeId: this.storeId,
      embedderId: this.embedderId,
      dimension: this.index.dimension,
      timeUnit: INDEX_TIME_UNIT,
      watermark: this.watermark!.toISOString(),
      generation,
    };
    const temporary = `${files.sidecar}.${randomUUID()}.tmp`;
    try {
      await writeFile(temporary, JSON.stringify(sidecar));
      await rename(temporary, files.sidecar);
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => {});
      throw error;
    }
  }

  /**
   * Removes what earlier saves left behind: generations the sidecar no longer names, torn
   * writes, older layouts. Another process's files are removed only once they are old enough
   * not to be a save in progress.
   */
  private async prune(files: { sidecar: string; prefix: string }): Promise<void> {
    const current = (await readSidecar(files.sidecar))?.generation;
    for (const entry of await readdir(this.directory)) {
      if (!entry.startsWith(files.prefix) || entry === basename(files.sidecar) || entry === current) continue;
      const path = join(this.directory, entry);
      const modified = this.saved.has(entry)
        ? 0
        : await stat(path).then(
            (stats) => stats.mtimeMs,
            () => Date.now(),
          );
      if (Date.now() - modified > PRUNE_AFTER_MS) {
        await rm(path, { recursive: true, force: true });
        this.saved.delete(entry);
      }
    }
  }

  close(): void {
    this.index.close();
  }

  private static files(directory: string, label: UnitLabel): { sidecar: string; prefix: string } {
    const prefix = `${label.toLowerCase()}.`;
    return { sidecar: join(directory, `${prefix}json`), prefix };
  }
}

/** The sidecar at `path`, or null when there is none; one from an older layout lacks fields, which open() checks. */
async function readSidecar(path: string): Promise<Sidecar | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Sidecar;
  } catch {
    return null;
  }
}
