/**
 * Argument normalisation shared by the addon wrapper (index.ts) and the
 * reference implementation (reference.ts), so both accept exactly the same
 * inputs and reject bad ones with the same errors. Every error names the
 * argument it is about.
 */
import type { DeviceChoice, Metric, Storage, VectorBatch } from './types.js';

/** validTo of a row that is still valid. */
export const OPEN_END = 2147483647;
const MIN_INDEX_TIME = -2147483648;
export const MAX_ID = 4294967294;
export const MAX_K = 1024;
export const MAX_DIMENSION = 65536;
export const MAX_QUERIES = 65536;

export function typeError(argument: string, message: string): never {
  throw new TypeError(`${argument} ${message}`);
}

export function rangeError(argument: string, message: string): never {
  throw new RangeError(`${argument} ${message}`);
}

export function checkInteger(value: unknown, argument: string, min: number, max: number): number {
  if (typeof value !== 'number') typeError(argument, `must be a number (got ${typeof value})`);
  if (!Number.isInteger(value) || value < min || value > max) {
    rangeError(argument, `must be an integer in [${min}, ${max}] (got ${value})`);
  }
  return value;
}

export function checkDimension(value: unknown): number {
  return checkInteger(value, 'dimension', 1, MAX_DIMENSION);
}

export function checkK(value: unknown): number {
  return checkInteger(value, 'k', 1, MAX_K);
}

export function checkStorage(value: unknown): Storage {
  if (value === undefined) return 'fp32';
  if (value !== 'fp32' && value !== 'fp16') rangeError('storage', `must be 'fp32' or 'fp16' (got ${String(value)})`);
  return value;
}

export function checkMetric(value: unknown): Metric {
  if (value === undefined) return 'cosine';
  if (value !== 'cosine' && value !== 'ip') rangeError('metric', `must be 'cosine' or 'ip' (got ${String(value)})`);
  return value;
}

export function checkDevice(value: unknown): DeviceChoice | undefined {
  if (value === undefined) return undefined;
  if (value !== 'auto' && value !== 'cpu' && value !== 'cuda') {
    rangeError('device', `must be 'auto', 'cpu' or 'cuda' (got ${String(value)})`);
  }
  return value;
}

export function checkPath(value: unknown): string {
  if (typeof value !== 'string') typeError('path', 'must be a string');
  if (value.length === 0) rangeError('path', 'must not be empty');
  return value;
}

/** Ids as a Uint32Array, each in [0, MAX_ID]. */
export function toIdArray(ids: unknown, argument = 'ids'): Uint32Array {
  if (ids instanceof Uint32Array) {
    for (let i = 0; i < ids.length; i++) {
      if (ids[i]! > MAX_ID) rangeError(`${argument}[${i}]`, `must be at most ${MAX_ID} (4294967295 is reserved)`);
    }
    return ids;
  }
  if (!Array.isArray(ids)) typeError(argument, 'must be a Uint32Array or an array of integers');
  const out = new Uint32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const id: unknown = ids[i];
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_ID) {
      rangeError(`${argument}[${i}]`, `must be an integer in [0, ${MAX_ID}] (got ${String(id)})`);
    }
    out[i] = id;
  }
  return out;
}

function checkIndexTime(value: unknown, argument: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_INDEX_TIME || value >= OPEN_END) {
    rangeError(argument, `must be an integer index time in [${MIN_INDEX_TIME}, ${OPEN_END - 1}] (got ${String(value)})`);
  }
  return value;
}

/**
 * One index time per row/query: a single number is broadcast. With `allowOpen`,
 * null/undefined/Infinity become OPEN_END (a still-valid row).
 */
export function toIndexTimeArray(value: unknown, count: number, argument: string, allowOpen = false): Int32Array {
  const isOpen = (v: unknown): boolean => allowOpen && (v === null || v === undefined || v === Infinity);
  if (isOpen(value)) return new Int32Array(count).fill(OPEN_END);
  if (typeof value === 'number') return new Int32Array(count).fill(checkIndexTime(value, argument));
  if (value instanceof Int32Array) {
    if (value.length !== count) rangeError(argument, `must have ${count} entries (got ${value.length})`);
    for (let i = 0; i < count; i++) {
      if (value[i] === OPEN_END && !allowOpen) rangeError(`${argument}[${i}]`, `must be below ${OPEN_END}`);
    }
    return value;
  }
  if (!Array.isArray(value)) typeError(argument, 'must be an index time, an Int32Array or an array of index times');
  if (value.length !== count) rangeError(argument, `must have ${count} entries (got ${value.length})`);
  const out = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const time: unknown = value[i];
    out[i] = isOpen(time) ? OPEN_END : checkIndexTime(time, `${argument}[${i}]`);
  }
  return out;
}

export interface Matrix {
  data: Float32Array;
  rows: number;
}

/**
 * A batch of vectors as one row-major Float32Array. With `checkValues` every
 * value must be finite (done for small inputs such as queries; large row
 * batches are checked off the JS thread by the addon instead).
 */
export function toMatrix(vectors: VectorBatch | unknown, dimension: number, argument: string, checkValues: boolean): Matrix {
  let data: Float32Array;
  if (vectors instanceof Float32Array) {
    if (vectors.length % dimension !== 0) {
      rangeError(argument, `must hold a whole number of vectors of dimension ${dimension} (got ${vectors.length} values)`);
    }
    data = vectors;
  } else if (Array.isArray(vectors)) {
    data = new Float32Array(vectors.length * dimension);
    for (let r = 0; r < vectors.length; r++) {
      const row: unknown = vectors[r];
      if (row === null || typeof row !== 'object' || typeof (row as ArrayLike<number>).length !== 'number') {
        typeError(`${argument}[${r}]`, 'must be an array of numbers');
      }
      const values = row as ArrayLike<unknown>;
      if (values.length !== dimension) rangeError(`${argument}[${r}]`, `must have ${dimension} values (got ${values.length})`);
      for (let i = 0; i < dimension; i++) {
        const v = values[i];
        if (typeof v !== 'number') typeError(`${argument}[${r}][${i}]`, 'must be a number');
        data[r * dimension + i] = v;
      }
    }
  } else {
    typeError(argument, 'must be a Float32Array or an array of vectors');
  }
  const rows = data.length / dimension;
  if (checkValues) {
    for (let i = 0; i < data.length; i++) {
      if (!Number.isFinite(data[i]!)) {
        rangeError(argument, `contains NaN or Infinity (vector ${Math.floor(i / dimension)}, element ${i % dimension})`);
      }
    }
  }
  return { data, rows };
}

/** Rejects zero vectors under the cosine metric (they have no direction). */
export function checkNonZeroRows(matrix: Matrix, dimension: number, argument: string): void {
  for (let r = 0; r < matrix.rows; r++) {
    let sum = 0;
    for (let i = 0; i < dimension; i++) sum += matrix.data[r * dimension + i]! ** 2;
    if (!(sum > 0)) rangeError(argument, `vector ${r} has zero norm (the cosine metric needs a direction)`);
  }
}

export function checkQueries(queries: unknown, dimension: number, metric: Metric, argument = 'queries'): Matrix {
  const matrix = toMatrix(queries, dimension, argument, true);
  if (matrix.rows === 0) rangeError(argument, 'must hold at least one query');
  if (matrix.rows > MAX_QUERIES) rangeError(argument, `may hold at most ${MAX_QUERIES} queries per call`);
  if (metric === 'cosine') checkNonZeroRows(matrix, dimension, argument);
  return matrix;
}

export interface ExcludeCsr {
  offsets: Uint32Array;
  ids: Uint32Array;
}

/** Per-query exclusion lists in CSR form, or undefined when none are given. */
export function toExcludeCsr(exclude: unknown, queryCount: number): ExcludeCsr | undefined {
  if (exclude === undefined || exclude === null) return undefined;
  if (!Array.isArray(exclude)) typeError('exclude', 'must be an array with one id list (or null) per query');
  if (exclude.length !== queryCount) rangeError('exclude', `must have one entry per query (${queryCount}, got ${exclude.length})`);
  const offsets = new Uint32Array(queryCount + 1);
  let total = 0;
  for (let q = 0; q < queryCount; q++) {
    const list: unknown = exclude[q];
    if (list !== null && list !== undefined) {
      if (typeof list !== 'object' || typeof (list as ArrayLike<number>).length !== 'number') {
        typeError(`exclude[${q}]`, 'must be an array of ids, a Uint32Array, or null');
      }
      total += (list as ArrayLike<number>).length;
    }
    offsets[q + 1] = total;
  }
  const ids = new Uint32Array(total);
  for (let q = 0; q < queryCount; q++) {
    const list = exclude[q] as ArrayLike<unknown> | null | undefined;
    if (list === null || list === undefined) continue;
    for (let i = 0; i < list.length; i++) {
      const id = list[i];
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_ID) {
        rangeError(`exclude[${q}][${i}]`, `must be an integer id in [0, ${MAX_ID}] (got ${String(id)})`);
      }
      ids[offsets[q]! + i] = id;
    }
  }
  return { offsets, ids };
}

/** ARR weights: one per query (a single number is broadcast), each in [0, 1]. */
export function toOmega(omega: unknown, queryCount: number): Float32Array {
  const out = new Float32Array(queryCount);
  const check = (value: unknown, argument: string): number => {
    if (typeof value !== 'number' || !(value >= 0 && value <= 1)) rangeError(argument, `must be a number in [0, 1] (got ${String(value)})`);
    return value;
  };
  if (typeof omega === 'number') return out.fill(check(omega, 'omega'));
  if (omega === null || typeof omega !== 'object' || typeof (omega as ArrayLike<number>).length !== 'number') {
    typeError('omega', 'must be a number or one number per query');
  }
  const values = omega as ArrayLike<unknown>;
  if (values.length !== queryCount) rangeError('omega', `must have one weight per query (${queryCount}, got ${values.length})`);
  for (let q = 0; q < queryCount; q++) out[q] = check(values[q], `omega[${q}]`);
  return out;
}

/**
 * Maps fusion ids (numbers or strings) to dense integers ordered like the ids
 * themselves, so "ties broken by smaller id" means the same thing natively.
 */
export function indexIds<Id extends string | number>(lists: readonly (readonly Id[])[], argument: string): { ordered: Id[]; index: Map<Id, number> } {
  const unique = new Set<Id>();
  let kind: 'string' | 'number' | undefined;
  lists.forEach((list, l) => {
    if (!Array.isArray(list)) typeError(`${argument}[${l}]`, 'must be an array of ids');
    list.forEach((id, i) => {
      const idKind = typeof id;
      if (idKind !== 'string' && !(idKind === 'number' && Number.isFinite(id))) {
        typeError(`${argument}[${l}][${i}]`, 'must be a string or a finite number');
      }
      if (kind === undefined) kind = idKind as 'string' | 'number';
      else if (kind !== idKind) typeError(`${argument}[${l}][${i}]`, 'mixes string and number ids');
      unique.add(id);
    });
  });
  const ordered = [...unique].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const index = new Map<Id, number>();
  ordered.forEach((id, i) => index.set(id, i));
  return { ordered, index };
}

/** Rejects a list that names the same id twice (fusion lists are sets). */
export function checkUniqueIds<Id>(ids: readonly Id[], argument: string): void {
  const seen = new Set<Id>();
  for (const id of ids) {
    if (seen.has(id)) rangeError(argument, `contains id ${String(id)} twice`);
    seen.add(id);
  }
}
