/** Public types of the native addon's TypeScript face (shared with the reference). */

/** Element type of stored rows. fp16 halves memory and Q=1 search time at ~1e-3 score error. */
export type Storage = 'fp32' | 'fp16';
/** `cosine`: rows and queries are normalised to unit length; `ip`: raw inner product. */
export type Metric = 'cosine' | 'ip';
/** Where an index runs its searches; `auto` picks CUDA when the addon has a usable device. */
export type DeviceChoice = 'auto' | 'cpu' | 'cuda';

/**
 * A point in index time: an int32 on the caller's scale (ChronoQL uses whole minutes since the
 * epoch, see domain/time.ts). Validity intervals are half-open: [validFrom, validTo).
 */
export type IndexTime = number;

export interface VectorIndexOptions {
  dimension: number;
  storage?: Storage;
  metric?: Metric;
  device?: DeviceChoice;
  /** On the GPU: the most device memory the index may hold before its searches move to the CPU (default: the configured CHRONOQL_DEVICE_MEMORY_MB, else none). */
  deviceMemoryCapBytes?: number;
}

/** A vector batch: either one flat Float32Array of n×d values or n vectors. */
export type VectorBatch = Float32Array | readonly ArrayLike<number>[];

export interface AddBatchInput {
  /** Caller-chosen ids, integers in [0, 2^32 - 2], unique among live rows. */
  ids: Uint32Array | readonly number[];
  vectors: VectorBatch;
  /** Index time from which each row is valid (one value for all rows, or one per row). */
  validFrom: IndexTime | Int32Array | readonly IndexTime[];
  /** Index time at which each row stops being valid (exclusive); null/undefined/Infinity = still valid. */
  validTo?: IndexTime | null | Int32Array | readonly (IndexTime | null | undefined)[];
}

export interface SearchOptions {
  /** Date the search is asked as of: one index time for every query or one per query. Only rows valid then are candidates. */
  asOf: IndexTime | Int32Array | readonly IndexTime[];
  /** Per query, ids that must not be returned (e.g. the first round of adaptive re-retrieval). */
  exclude?: readonly (ArrayLike<number> | null | undefined)[];
}

/** Hits of one query, best first; ties ordered by smaller id. Fewer than k when fewer rows qualify. */
export interface QueryResult {
  ids: Uint32Array;
  scores: Float32Array;
}

export interface CudaDeviceInfo {
  index: number;
  name: string;
  totalMemoryBytes: number;
  freeMemoryBytes: number;
  computeCapability: string;
  multiprocessors: number;
}

export interface BackendInfo {
  /** Where new indexes search by default. */
  backend: 'cpu' | 'cuda';
  /** Which build was loaded: the node-gyp CPU build or the cmake-js CUDA build. */
  build: 'cpu' | 'cuda';
  addonPath: string;
  cudaCompiled: boolean;
  devices: CudaDeviceInfo[];
  /** Why no device is used, when none is. */
  cudaUnavailableReason?: string;
  cpuKernel: string;
  cpuThreads: number;
  maxK: number;
  cudaMaxK: number;
}

export interface ClassifierLayerJson {
  /** outputs × inputs (the PyTorch nn.Linear layout). */
  weights: number[][];
  bias: number[];
  /** Activation after the layer; the last layer feeds the softmax and must have none. */
  activation?: 'relu' | 'none';
}

/** A linear model or small MLP with ReLU and softmax output, as stored in JSON. */
export interface ClassifierModelJson {
  type?: 'linear' | 'mlp';
  classes: string[];
  features: string[];
  /** Inputs are standardised as (x - mean) / std before the first layer. */
  normalization?: { mean: number[]; std: number[] };
  layers: ClassifierLayerJson[];
}

/** One named score list for weighted-sum fusion. */
export interface ScoreList<Id extends string | number> {
  ids: readonly Id[];
  scores: ArrayLike<number>;
}

export interface FusedItem<Id extends string | number> {
  id: Id;
  score: number;
}
