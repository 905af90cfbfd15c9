/**
 * Typed face of the chronoql_native addon: the time-filtered vector index,
 * the classifier and score fusion. Every argument is checked here (a bad type,
 * length, NaN or out-of-range value throws an Error naming the argument before
 * native code sees it), and every call that can take more than a moment
 * returns a promise whose work runs off the JS thread.
 *
 * The plain TypeScript oracle with the same semantics is ./reference.ts.
 */
import {
  checkDevice,
  checkDimension,
  checkInteger,
  checkK,
  checkMetric,
  checkPath,
  checkQueries,
  checkStorage,
  rangeError,
  toIndexTimeArray,
  toExcludeCsr,
  toIdArray,
  toMatrix,
  toOmega,
  typeError,
  MAX_ID,
  MAX_K,
  OPEN_END,
} from './args.js';
import { timed } from './calls.js';
import {
  configureNative,
  loadAddon,
  nativeSettings,
  type NativeSearchResults,
  type NativeSettings,
  type NativeVectorIndexHandle,
} from './loader.js';
import { placeSearch } from './placement.js';
import type {
  AddBatchInput,
  BackendInfo,
  IndexTime,
  DeviceChoice,
  Metric,
  QueryResult,
  SearchOptions,
  Storage,
  VectorBatch,
  VectorIndexOptions,
} from './types.js';

export type * from './types.js';
export { configureNative, MAX_ID, MAX_K, OPEN_END, type NativeSettings };
export { observeNativeCalls, type NativeCallObserver } from './calls.js';
export { Classifier, Fusion } from './scoring.js';

/** A GPU index whose searches moved to the CPU (the device lacks the memory for it), or back. */
export interface DevicePlacementChange {
  onDevice: boolean;
  /** Why its searches run on the CPU, while they do. */
  reason?: string;
  dimension: number;
  storage: Storage;
  rows: number;
}
export type DevicePlacementObserver = (change: DevicePlacementChange) => void;
let placementObserver: DevicePlacementObserver | undefined;

/** Hears when an index's searches leave the GPU for the CPU or come back (for the log). */
export function observeDevicePlacement(observer: DevicePlacementObserver | undefined): void {
  placementObserver = observer;
}

/** What the addon runs on and why. Loads the addon on first use. */
export function backend(): BackendInfo {
  const { addon, path, build, device, cudaNotUsedBecause } = loadAddon();
  const info = addon.backendInfo();
  const result: BackendInfo = { backend: device, build, addonPath: path, ...info };
  if (device === 'cpu' && cudaNotUsedBecause !== undefined) result.cudaUnavailableReason = cudaNotUsedBecause;
  return result;
}

const noop = (): void => undefined;

/**
 * Orders calls on one index the way they were issued: a search sees every
 * mutation issued before it; a mutation waits for every earlier search and
 * mutation. Searches issued back to back still run concurrently.
 */
class IssueOrder {
  private lastWrite: Promise<void> = Promise.resolve();
  private readsSinceWrite = new Set<Promise<void>>();

  read<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.lastWrite.then(operation);
    const settled = result.then(noop, noop);
    this.readsSinceWrite.add(settled);
    void settled.then(() => this.readsSinceWrite.delete(settled));
    return result;
  }

  write<T>(operation: () => Promise<T>): Promise<T> {
    const before = Promise.all([this.lastWrite, ...this.readsSinceWrite]);
    this.readsSinceWrite = new Set();
    const result = before.then(operation);
    this.lastWrite = result.then(noop, noop);
    return result;
  }
}

function splitResults(raw: NativeSearchResults): QueryResult[] {
  const out: QueryResult[] = [];
  for (let q = 0; q < raw.counts.length; q++) {
    const start = q * raw.k;
    const end = start + raw.counts[q]!;
    out.push({ ids: raw.ids.subarray(start, end), scores: raw.scores.subarray(start, end) });
  }
  return out;
}

function checkOptions(options: unknown): SearchOptions {
  if (options === null || typeof options !== 'object') typeError('options', 'must be an object with asOf (and optionally exclude)');
  return options as SearchOptions;
}

/**
 * Exact (brute-force) time-filtered top-k index over float32 or fp16 rows.
 * Each row has an id, a validity interval [validFrom, validTo) in int32 time
 * units of the caller's choosing (small integers in the tests; whole minutes in
 * ChronoQL's retrieval, see domain/time.ts) and a deleted flag; a search
 * returns, per query, the k best rows valid at that query's asOf, excluding
 * the ids it is told to skip.
 */
export class VectorIndex {
  private readonly order = new IssueOrder();
  private closed = false;
  readonly dimension: number;
  readonly storage: Storage;
  readonly metric: Metric;
  /** Where this index's searches run (a GPU index searches on the CPU while the device lacks the memory for it). */
  readonly backend: 'cpu' | 'cuda';
  private hostReason: string | undefined;

  private constructor(
    private readonly handle: NativeVectorIndexHandle,
    private readonly deviceMemoryCapBytes: number | undefined,
  ) {
    const description = handle.describe();
    this.dimension = description.dimension;
    this.storage = description.storage;
    this.metric = description.metric;
    this.backend = description.backend;
  }

  static create(options: VectorIndexOptions): VectorIndex {
    if (options === null || typeof options !== 'object') typeError('options', 'must be an object with a dimension');
    const dimension = checkDimension(options.dimension);
    const storage = checkStorage(options.storage);
    const metric = checkMetric(options.metric);
    const device = resolveDevice(checkDevice(options.device));
    const cap = checkDeviceMemoryCap(options.deviceMemoryCapBytes);
    const { addon } = loadAddon();
    return new VectorIndex(new addon.NativeVectorIndex(dimension, storage, metric, device), cap);
  }

  /** Opens an index written by save(). */
  static load(path: string, options: Pick<VectorIndexOptions, 'device' | 'deviceMemoryCapBytes'> = {}): Promise<VectorIndex> {
    checkPath(path);
    const cap = checkDeviceMemoryCap(options.deviceMemoryCapBytes);
    const device = resolveDevice(checkDevice(options.device));
    const { addon } = loadAddon();
    return addon.loadVectorIndex(path, device).then((handle) => new VectorIndex(handle, cap));
  }

  private get open(): NativeVectorIndexHandle {
    if (this.closed) throw new Error('VectorIndex is closed');
    return this.handle;
  }

  /**
   * Releases the index's memory (host and device) once calls already issued
   * have finished. Any later call throws.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    void this.order.write(async () => this.handle.close());
  }

  /** Live (not removed) rows. */
  get size(): number {
    return this.open.size();
  }

  /** Host bytes held: rows, per-row metadata and the id map. */
  get memoryBytes(): number {
    return this.open.memoryBytes();
  }

  /** Bytes held on the GPU (0 on the CPU backend, and while a GPU index searches on the CPU). */
  get deviceMemoryBytes(): number {
    return this.open.deviceMemoryBytes();
  }

  /** Why the last search of this GPU index ran on the CPU; undefined when it ran on the GPU (and on the CPU backend). */
  get searchedOnHostBecause(): string | undefined {
    return this.hostReason;
  }

  /**
   * Whether a search starting now runs on the CPU: a GPU index whose rows need more device
   * memory than is free or than its cap allows. Decided as the search starts, after the
   * mutations issued before it; the observer hears when the answer changes.
   */
  private searchOnHost(handle: NativeVectorIndexHandle): boolean {
    if (this.backend !== 'cuda') return false;
    const placement = placeSearch({ ...handle.deviceFootprint(), freeBytes: loadAddon().addon.deviceMemory().freeBytes, capBytes: this.deviceMemoryCapBytes });
    const wasOnHost = this.hostReason !== undefined;
    this.hostReason = placement.onDevice ? undefined : placement.reason;
    if (wasOnHost === placement.onDevice) {
      placementObserver?.({ onDevice: placement.onDevice, reason: this.hostReason, dimension: this.dimension, storage: this.storage, rows: handle.size() });
    }
    return !placement.onDevice;
  }

  /**
   * Appends rows. Shapes, ids and intervals are checked here (throws); the
   * values themselves (NaN/Infinity, zero norm under cosine) are checked by the
   * addon off the JS thread, and a bad batch rejects without adding anything.
   * The arrays are copied before the call is queued (one memcpy each), so a
   * caller that reuses, transfers or resizes its buffers cannot change or free
   * what the addon reads in the background. Resolves to the live row count.
   */
  addBatch(input: AddBatchInput): Promise<number> {
    const handle = this.open;
    if (input === null || typeof input !== 'object') typeError('input', 'must be an object with ids, vectors and validFrom');
    const ids = toIdArray(input.ids);
    const matrix = toMatrix(input.vectors, this.dimension, 'vectors', false);
    if (matrix.rows !== ids.length) rangeError('vectors', `must hold one vector per id (${ids.length}, got ${matrix.rows})`);
    const validFrom = toIndexTimeArray(input.validFrom, ids.length, 'validFrom');
    const validTo = toIndexTimeArray(input.validTo, ids.length, 'validTo', true);
    const seen = new Set<number>();
    for (let i = 0; i < ids.length; i++) {
      if (validFrom[i]! >= validTo[i]!) rangeError(`validTo[${i}]`, `must be after validFrom (${validTo[i]} <= ${validFrom[i]})`);
      if (seen.has(ids[i]!)) rangeError('ids', `contains id ${ids[i]} twice`);
      seen.add(ids[i]!);
    }
    const [idCopy, dataCopy, fromCopy, toCopy] = [ids.slice(), matrix.data.slice(), validFrom.slice(), validTo.slice()];
    return timed('addBatch', () => this.order.write(() => handle.addBatch(idCopy, dataCopy, fromCopy, toCopy)));
  }

  /** Marks rows deleted; resolves to how many live rows were removed. */
  remove(ids: Uint32Array | readonly number[]): Promise<number> {
    const handle = this.open;
    const list = Uint32Array.from(toIdArray(ids));
    return this.order.write(() => handle.remove(list));
  }

  /** Ends the validity of live rows at `validTo` (exclusive); resolves to how many rows' end moved (closing a row again at the same time changes nothing). */
  invalidate(ids: Uint32Array | readonly number[], validTo: IndexTime | Int32Array | readonly IndexTime[]): Promise<number> {
    const handle = this.open;
    const list = Uint32Array.from(toIdArray(ids));
    const ends = Int32Array.from(toIndexTimeArray(validTo, list.length, 'validTo', true));
    return this.order.write(() => handle.invalidate(list, ends));
  }

  /**
   * Exact top-k per query among rows valid at that query's asOf.
   * `queries` is one flat Float32Array (Q×d) or an array of vectors.
   */
  search(queries: VectorBatch, k: number, options: SearchOptions): Promise<QueryResult[]> {
    const handle = this.open;
    const matrix = checkQueries(queries, this.dimension, this.metric);
    checkK(k);
    const opts = checkOptions(options);
    const asOf = toIndexTimeArray(opts.asOf, matrix.rows, 'asOf');
    const exclude = toExcludeCsr(opts.exclude, matrix.rows);
    // Snapshot the (small) query batch: the call may wait behind an earlier
    // mutation, and the caller may reuse its buffer as soon as we return.
    const data = Float32Array.from(matrix.data);
    return timed('search', () =>
      this.order.read(() => handle.search(data, k, Int32Array.from(asOf), exclude?.offsets, exclude?.ids, this.searchOnHost(handle)).then(splitResults)),
    );
  }

  /**
   * Adaptive re-retrieval: ranks rows by (1-ω)·sim(first, row) + ω·sim(second,
   * row) with one ω per query, in a single scan (the score is linear in the
   * prepared query, so the blended query is searched once). Pass the first
   * round's ids in `options.exclude`.
   */
  searchArr(first: VectorBatch, second: VectorBatch, omega: number | ArrayLike<number>, k: number, options: SearchOptions): Promise<QueryResult[]> {
    const handle = this.open;
    const a = checkQueries(first, this.dimension, this.metric, 'queries');
    const b = checkQueries(second, this.dimension, this.metric, 'secondQueries');
    if (a.rows !== b.rows) rangeError('secondQueries', `must hold as many queries as queries (${a.rows}, got ${b.rows})`);
    const weights = toOmega(omega, a.rows);
    checkK(k);
    const opts = checkOptions(options);
    const asOf = toIndexTimeArray(opts.asOf, a.rows, 'asOf');
    const exclude = toExcludeCsr(opts.exclude, a.rows);
    const firstData = Float32Array.from(a.data);
    const secondData = Float32Array.from(b.data);
    return timed('searchArr', () =>
      this.order.read(() =>
        handle
          .searchBlended(firstData, secondData, weights, k, Int32Array.from(asOf), exclude?.offsets, exclude?.ids, this.searchOnHost(handle))
          .then(splitResults),
      ),
    );
  }

  /** Writes live rows to `path` (atomically, via a temporary file and rename). */
  save(path: string): Promise<void> {
    const handle = this.open;
    checkPath(path);
    return this.order.read(() => handle.save(path));
  }

  /** Seconds to read every stored row once: the memory bound of a single-query search. */
  measureStreamSeconds(): Promise<number> {
    const handle = this.open;
    return this.order.read(() => handle.measureStreamSeconds());
  }
}

function checkDeviceMemoryCap(value: unknown): number | undefined {
  if (value === undefined) return nativeSettings().deviceMemoryCapBytes;
  return checkInteger(value, 'deviceMemoryCapBytes', 1, Number.MAX_SAFE_INTEGER);
}

function resolveDevice(device: DeviceChoice | undefined): DeviceChoice {
  // 'auto' resolves to the loader's choice, which honours CHRONOQL_DEVICE.
  return device === undefined || device === 'auto' ? loadAddon().device : device;
}
