/**
 * Plain TypeScript reference of everything the native addon computes: the
 * time-filtered exact top-k index, the classifier, and score fusion. It is the
 * oracle the addon is tested against and the "reference loop" of the search
 * benchmark, so it favours obviously-correct code over speed, but it is not
 * deliberately slow (typed arrays, one pass, bounded insertion for top-k).
 *
 * Semantics match the addon exactly: rows valid iff validFrom <= asOf <
 * validTo and not deleted; cosine normalises rows and queries by dividing by
 * the double-precision norm; fp16 storage rounds to nearest-even half; ranking
 * is higher score first, ties by smaller id. Scores are accumulated in double
 * (the addon uses float32 FMA), so compare scores with a tolerance.
 */
import {
  checkDimension,
  checkK,
  checkMetric,
  checkNonZeroRows,
  checkQueries,
  checkStorage,
  checkUniqueIds,
  indexIds,
  OPEN_END,
  rangeError,
  toIndexTimeArray,
  toExcludeCsr,
  toIdArray,
  toMatrix,
  toOmega,
  typeError,
  type ExcludeCsr,
} from '../../src/native/args.js';
import { parseClassifierModel, toFeatureMatrix, type ParsedClassifier } from '../../src/native/classifier-model.js';
import type {
  AddBatchInput,
  ClassifierModelJson,
  FusedItem,
  Metric,
  QueryResult,
  ScoreList,
  SearchOptions,
  Storage,
  VectorBatch,
  VectorIndexOptions,
} from '../../src/native/types.js';

// ---------------------------------------------------------------------------
// Half precision (IEEE binary16, round to nearest even), as F16C and CUDA do it.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function floatToHalfBits(value: number): number {
  f32[0] = value;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 | (mantissa >>> 13) : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - halfExponent;
    let halfMantissa = mantissa >>> shift;
    const remainder = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (remainder > halfway || (remainder === halfway && (halfMantissa & 1) !== 0)) halfMantissa++;
    return sign | halfMantissa;
  }
  let half = sign | (halfExponent << 10) | (mantissa >>> 13);
  const remainder = mantissa & 0x1fff;
  if (remainder > 0x1000 || (remainder === 0x1000 && (half & 1) !== 0)) half++;
  return half;
}

export function halfBitsToFloat(half: number): number {
  const sign = half & 0x8000 ? -1 : 1;
  const exponent = (half >>> 10) & 0x1f;
  const mantissa = half & 0x3ff;
  if (exponent === 0x1f) return mantissa !== 0 ? NaN : sign * Infinity;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** The float32 value a number becomes when stored as fp16. */
export function roundToHalf(value: number): number {
  return halfBitsToFloat(floatToHalfBits(value));
}

/** Copy of `source[offset..offset+d)` scaled to unit length (divides by the double norm, like the addon). */
export function normalised(source: ArrayLike<number>, offset: number, dimension: number, out: Float32Array, outOffset: number): void {
  let sum = 0;
  for (let i = 0; i < dimension; i++) sum += source[offset + i]! * source[offset + i]!;
  const norm = Math.sqrt(sum);
  for (let i = 0; i < dimension; i++) out[outOffset + i] = source[offset + i]! / norm;
}

// ---------------------------------------------------------------------------
// Vector index

export class ReferenceVectorIndex {
  readonly dimension: number;
  readonly storage: Storage;
  readonly metric: Metric;
  private rows = new Float32Array(0);
  private ids = new Uint32Array(0);
  private validFrom = new Int32Array(0);
  private validTo = new Int32Array(0);
  private deleted = new Uint8Array(0);
  private rowCount = 0;
  private live = 0;
  private readonly idToRow = new Map<number, number>();

  constructor(options: VectorIndexOptions) {
    if (options === null || typeof options !== 'object') typeError('options', 'must be an object');
    this.dimension = checkDimension(options.dimension);
    this.storage = checkStorage(options.storage);
    this.metric = checkMetric(options.metric);
  }

  get size(): number {
    return this.live;
  }

  private grow(needed: number): void {
    if (needed <= this.ids.length) return;
    const capacity = Math.max(needed, this.ids.length * 2, 16);
    const d = this.dimension;
    const rows = new Float32Array(capacity * d);
    rows.set(this.rows.subarray(0, this.rowCount * d));
    this.rows = rows;
    const grow32 = <T extends Uint32Array | Int32Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old.subarray(0, this.rowCount) as never);
      return next;
    };
    this.ids = grow32(this.ids, (n) => new Uint32Array(n));
    this.validFrom = grow32(this.validFrom, (n) => new Int32Array(n));
    this.validTo = grow32(this.validTo, (n) => new Int32Array(n));
    const deleted = new Uint8Array(capacity);
    deleted.set(this.deleted.subarray(0, this.rowCount));
    this.deleted = deleted;
  }

  private liveRow(id: number): number | undefined {
    const row = this.idToRow.get(id);
    return row !== undefined && this.deleted[row] === 0 ? row : undefined;
  }

  /** Same checks as the addon, all synchronous here. Returns the live row count. */
  addBatch(input: AddBatchInput): number {
    if (input === null || typeof input !== 'object') typeError('input', 'must be an object');
    const d = this.dimension;
    const ids = toIdArray(input.ids);
    const matrix = toMatrix(input.vectors, d, 'vectors', true);
    if (matrix.rows !== ids.length) rangeError('vectors', `must hold one vector per id (${ids.length}, got ${matrix.rows})`);
    if (this.metric === 'cosine') checkNonZeroRows(matrix, d, 'vectors');
    const from = toIndexTimeArray(input.validFrom, ids.length, 'validFrom');
    const to = toIndexTimeArray(input.validTo, ids.length, 'validTo', true);
    const batch = new Set<number>();
    for (let i = 0; i < ids.length; i++) {
      if (from[i]! >= to[i]!) rangeError(`validTo[${i}]`, `must be after validFrom (${to[i]} <= ${from[i]})`);
      if (batch.has(ids[i]!)) rangeError('ids', `contains id ${ids[i]} twice`);
      if (this.liveRow(ids[i]!) !== undefined) rangeError('ids', `contains id ${ids[i]}, which is already in the index (remove it first)`);
      batch.add(ids[i]!);
    }
    this.grow(this.rowCount + ids.length);
    for (let i = 0; i < ids.length; i++) {
      const row = this.rowCount++;
      if (this.metric === 'cosine') normalised(matrix.data, i * d, d, this.rows, row * d);
      else this.rows.set(matrix.data.subarray(i * d, (i + 1) * d), row * d);
      if (this.storage === 'fp16') {
        for (let j = row * d; j < (row + 1) * d; j++) this.rows[j] = roundToHalf(this.rows[j]!);
      }
      this.ids[row] = ids[i]!;
      this.validFrom[row] = from[i]!;
      this.validTo[row] = to[i]!;
      this.deleted[row] = 0;
      this.idToRow.set(ids[i]!, row);
    }
    this.live += ids.length;
    return this.live;
  }

  remove(ids: Uint32Array | readonly number[]): number {
    let removed = 0;
    for (const id of toIdArray(ids)) {
      const row = this.liveRow(id);
      if (row === undefined) continue;
      this.deleted[row] = 1;
      this.live--;
      removed++;
    }
    return removed;
  }

  invalidate(ids: Uint32Array | readonly number[], validTo: number | Int32Array | readonly number[]): number {
    const list = toIdArray(ids);
    const ends = toIndexTimeArray(validTo, list.length, 'validTo', true);
    list.forEach((id, i) => {
      const row = this.liveRow(id);
      if (row !== undefined && ends[i]! < this.validFrom[row]!) {
        rangeError(`validTo[${i}]`, `(${ends[i]}) is before validFrom (${this.validFrom[row]}) of id ${id}`);
      }
    });
    let changed = 0;
    list.forEach((id, i) => {
      const row = this.liveRow(id);
      if (row === undefined || this.validTo[row] === ends[i]) return;
      this.validTo[row] = ends[i]!;
      changed++;
    });
    return changed;
  }

  /** Queries as the scan sees them: unit length for cosine. */
  prepareQueries(queries: VectorBatch): Float32Array {
    const matrix = checkQueries(queries, this.dimension, this.metric);
    if (this.metric !== 'cosine') return Float32Array.from(matrix.data);
    const out = new Float32Array(matrix.data.length);
    for (let q = 0; q < matrix.rows; q++) normalised(matrix.data, q * this.dimension, this.dimension, out, q * this.dimension);
    return out;
  }

  /** Whether `id` is a live row valid at `asOf` (test helper). */
  isValidAt(id: number, asOf: number): boolean {
    const row = this.liveRow(id);
    return row !== undefined && this.validFrom[row]! <= asOf && asOf < this.validTo[row]!;
  }

  /** Exact score of a prepared query against the row with `id` (test helper). */
  scoreOf(prepared: Float32Array, query: number, id: number): number {
    const row = this.liveRow(id);
    if (row === undefined) return NaN;
    const d = this.dimension;
    let sum = 0;
    for (let i = 0; i < d; i++) sum += prepared[query * d + i]! * this.rows[row * d + i]!;
    return sum;
  }

  search(queries: VectorBatch, k: number, options: SearchOptions): QueryResult[] {
    const prepared = this.prepareQueries(queries);
    return this.searchPrepared(prepared, k, options);
  }

  /** Adaptive re-retrieval: (1-ω)·sim(q, d) + ω·sim(q', d) as one search with the blended query. */
  searchArr(first: VectorBatch, second: VectorBatch, omega: number | ArrayLike<number>, k: number, options: SearchOptions): QueryResult[] {
    const a = this.prepareQueries(first);
    const b = this.prepareQueries(second);
    if (a.length !== b.length) rangeError('secondQueries', 'must hold as many queries as queries');
    const queryCount = a.length / this.dimension;
    const weights = toOmega(omega, queryCount);
    const blended = new Float32Array(a.length);
    for (let q = 0; q < queryCount; q++) {
      const w = weights[q]!;
      const keep = Math.fround(1 - w);
      for (let i = q * this.dimension; i < (q + 1) * this.dimension; i++) {
        blended[i] = Math.fround(keep * a[i]!) + Math.fround(w * b[i]!);
      }
    }
    return this.searchPrepared(blended, k, options);
  }

  private searchPrepared(prepared: Float32Array, k: number, options: SearchOptions): QueryResult[] {
    checkK(k);
    if (options === null || typeof options !== 'object') typeError('options', 'must be an object with asOf');
    const d = this.dimension;
    const queryCount = prepared.length / d;
    const asOf = toIndexTimeArray(options.asOf, queryCount, 'asOf');
    const exclude = toExcludeCsr(options.exclude, queryCount);
    const results: QueryResult[] = [];
    const topScores = new Float64Array(k);
    const topIds = new Uint32Array(k);
    for (let q = 0; q < queryCount; q++) {
      const at = asOf[q]!;
      const excluded = excludedSet(exclude, q);
      let count = 0;
      for (let row = 0; row < this.rowCount; row++) {
        if (this.deleted[row] !== 0 || this.validFrom[row]! > at || at >= this.validTo[row]!) continue;
        const id = this.ids[row]!;
        if (excluded !== undefined && excluded.has(id)) continue;
        let score = 0;
        const base = row * d;
        const queryBase = q * d;
        for (let i = 0; i < d; i++) score += prepared[queryBase + i]! * this.rows[base + i]!;
        // Bounded insertion into the sorted top-k (higher score, then smaller id).
        if (count === k) {
          const worstScore = topScores[k - 1]!;
          if (score < worstScore || (score === worstScore && id > topIds[k - 1]!)) continue;
        }
        let position = count < k ? count++ : k - 1;
        while (position > 0) {
          const s = topScores[position - 1]!;
          if (s > score || (s === score && topIds[position - 1]! < id)) break;
          topScores[position] = s;
          topIds[position] = topIds[position - 1]!;
          position--;
        }
        topScores[position] = score;
        topIds[position] = id;
      }
      results.push({ ids: topIds.slice(0, count), scores: Float32Array.from(topScores.subarray(0, count)) });
    }
    return results;
  }
}

function excludedSet(csr: ExcludeCsr | undefined, query: number): Set<number> | undefined {
  if (csr === undefined || csr.offsets[query] === csr.offsets[query + 1]) return undefined;
  return new Set(csr.ids.subarray(csr.offsets[query]!, csr.offsets[query + 1]!));
}

// ---------------------------------------------------------------------------
// Classifier

export class ReferenceClassifier {
  private constructor(private readonly model: ParsedClassifier) {}

  static fromJson(json: string | ClassifierModelJson): ReferenceClassifier {
    return new ReferenceClassifier(parseClassifierModel(json));
  }

  get classes(): readonly string[] {
    return this.model.classes;
  }

  get features(): readonly string[] {
    return this.model.features;
  }

  /** batch × classes probabilities (softmax), computed in double. */
  scoreBatch(features: unknown): Float32Array {
    const { classes, mean, std, layers } = this.model;
    const input = toFeatureMatrix(features, this.model.features);
    const width = this.model.features.length;
    const out = new Float32Array(input.rows * classes.length);
    for (let r = 0; r < input.rows; r++) {
      let a: number[] = [];
      for (let i = 0; i < width; i++) a.push((input.data[r * width + i]! - mean[i]!) / std[i]!);
      for (const layer of layers) {
        const next: number[] = [];
        for (let o = 0; o < layer.outputs; o++) {
          let sum = layer.bias[o]!;
          for (let i = 0; i < layer.inputs; i++) sum += layer.weights[o * layer.inputs + i]! * a[i]!;
          next.push(layer.relu && sum < 0 ? 0 : sum);
        }
        a = next;
      }
      const max = Math.max(...a);
      let total = 0;
      for (const logit of a) total += Math.exp(logit - max);
      a.forEach((logit, c) => {
        out[r * classes.length + c] = Math.exp(logit - max) / total;
      });
    }
    return out;
  }
}

// ---------------------------------------------------------------------------
// Fusion

function rankFused<Id extends string | number>(scores: Map<Id, number>): FusedItem<Id>[] {
  return [...scores.entries()]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export const referenceFusion = {
  /** ARR fused scores: rows of first/second belong to queries in order; one ω per query. */
  arr(first: ArrayLike<number>, second: ArrayLike<number>, omega: number | ArrayLike<number>): Float32Array {
    if (first.length !== second.length) rangeError('second', 'must have the same length as first');
    const queryCount = typeof omega === 'number' ? 1 : omega.length;
    const weights = toOmega(omega, queryCount);
    if (queryCount === 0 || first.length % queryCount !== 0) rangeError('first', 'must hold one equal-length row per ω');
    const perQuery = first.length / queryCount;
    const out = new Float32Array(first.length);
    for (let q = 0; q < queryCount; q++) {
      const w = weights[q]!;
      for (let j = q * perQuery; j < (q + 1) * perQuery; j++) {
        out[j] = (1 - w) * Math.fround(first[j]!) + w * Math.fround(second[j]!);
      }
    }
    return out;
  },

  /** Weighted sum of min-max normalised score lists over the union of their candidates. */
  weightedSum<Id extends string | number>(lists: Record<string, ScoreList<Id>>, weights: Record<string, number>): FusedItem<Id>[] {
    const fused = new Map<Id, number>();
    for (const name of Object.keys(weights)) {
      if (!(name in lists)) rangeError(`weights.${name}`, 'names no list');
    }
    for (const [name, list] of Object.entries(lists)) {
      const weight = weights[name];
      if (typeof weight !== 'number' || !Number.isFinite(weight)) rangeError(`weights.${name}`, 'must be a finite number');
      if (list.ids.length !== list.scores.length) rangeError(`lists.${name}.scores`, 'must have one score per id');
      checkUniqueIds(list.ids, `lists.${name}`);
      if (list.ids.length === 0) continue;
      let lo = Infinity;
      let hi = -Infinity;
      for (let i = 0; i < list.scores.length; i++) {
        const s = list.scores[i]!;
        if (!Number.isFinite(s)) rangeError(`lists.${name}.scores[${i}]`, 'must be finite');
        lo = Math.min(lo, s);
        hi = Math.max(hi, s);
      }
      const range = hi - lo;
      list.ids.forEach((id, i) => {
        const normalisedScore = range > 0 ? (list.scores[i]! - lo) / range : 1;
        fused.set(id, (fused.get(id) ?? 0) + weight * normalisedScore);
      });
    }
    return rankFused(fused);
  },

  /** Reciprocal rank fusion: Σ weight / (k + rank), rank from 1 in each list's order. */
  rrf<Id extends string | number>(lists: readonly (readonly Id[])[] | Record<string, readonly Id[]>, options: { k?: number; weights?: readonly number[] } = {}): FusedItem<Id>[] {
    const k = options.k ?? 60;
    if (typeof k !== 'number' || !(k >= 0) || !Number.isFinite(k)) rangeError('k', 'must be a finite number >= 0');
    const entries = Array.isArray(lists) ? (lists as readonly (readonly Id[])[]) : Object.values(lists as Record<string, readonly Id[]>);
    indexIds(entries, 'lists');
    if (options.weights !== undefined && options.weights.length !== entries.length) rangeError('weights', 'must have one entry per list');
    const fused = new Map<Id, number>();
    entries.forEach((list, l) => {
      const weight = options.weights?.[l] ?? 1;
      checkUniqueIds(list, `lists[${l}]`);
      list.forEach((id, i) => fused.set(id, (fused.get(id) ?? 0) + weight / (k + i + 1)));
    });
    return rankFused(fused);
  },
};

export { OPEN_END };
