/**
 * The classifier and score fusion of the addon: every argument checked here before native code
 * sees it (see index.ts), classifier batches scored off the JS thread.
 */
import { checkUniqueIds, indexIds, rangeError, toOmega, typeError } from './args.js';
import { timed } from './calls.js';
import { parseClassifierModel, toFeatureMatrix, type ParsedClassifier } from './classifier-model.js';
import { loadAddon, type NativeClassifierHandle } from './loader.js';
import type { ClassifierModelJson, FusedItem, ScoreList } from './types.js';

/** A linear or MLP classifier with softmax output, loaded from JSON and scored in batches. */
export class Classifier {
  private constructor(
    private readonly model: ParsedClassifier,
    private readonly handle: NativeClassifierHandle,
  ) {}

  static fromJson(json: string | ClassifierModelJson): Classifier {
    const model = parseClassifierModel(json);
    const { addon } = loadAddon();
    const sizes = Uint32Array.from([model.features.length, ...model.layers.map((l) => l.outputs)]);
    const weights = new Float32Array(model.layers.reduce((n, l) => n + l.weights.length, 0));
    const biases = new Float32Array(model.layers.reduce((n, l) => n + l.bias.length, 0));
    let w = 0;
    let b = 0;
    for (const layer of model.layers) {
      weights.set(layer.weights, w);
      biases.set(layer.bias, b);
      w += layer.weights.length;
      b += layer.bias.length;
    }
    const relu = Uint8Array.from(model.layers.map((l) => (l.relu ? 1 : 0)));
    const handle = new addon.NativeClassifier(model.features.length, model.mean, model.std, sizes, weights, biases, relu);
    return new Classifier(model, handle);
  }

  get classes(): readonly string[] {
    return this.model.classes;
  }

  get features(): readonly string[] {
    return this.model.features;
  }

  /**
   * Class probabilities, batch × classes (row-major, classes in model order).
   * Rows: a flat Float32Array, arrays in feature order, or records by feature name.
   */
  scoreBatch(features: Float32Array | readonly (ArrayLike<number> | Readonly<Record<string, number>>)[]): Promise<Float32Array> {
    const matrix = toFeatureMatrix(features, this.model.features);
    return timed('classify', () => this.handle.scoreBatch(Float32Array.from(matrix.data)));
  }

  /** Like scoreBatch, one `{ className: probability }` record per row. */
  scoreRecords(features: readonly (ArrayLike<number> | Readonly<Record<string, number>>)[]): Promise<Record<string, number>[]> {
    const classes = this.model.classes;
    return this.scoreBatch(features).then((probabilities) => {
      const out: Record<string, number>[] = [];
      for (let r = 0; r < probabilities.length / classes.length; r++) {
        const record: Record<string, number> = {};
        classes.forEach((name, c) => {
          record[name] = probabilities[r * classes.length + c]!;
        });
        out.push(record);
      }
      return out;
    });
  }
}

function checkFiniteArray(values: unknown, argument: string): Float32Array {
  if (values === null || typeof values !== 'object' || typeof (values as ArrayLike<number>).length !== 'number') {
    typeError(argument, 'must be a Float32Array or an array of numbers');
  }
  const list = values as ArrayLike<unknown>;
  const out = new Float32Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) rangeError(`${argument}[${i}]`, 'must be a finite number');
    out[i] = v;
  }
  return out;
}

function checkFiniteNumbers(values: unknown, argument: string): Float64Array {
  if (values === null || typeof values !== 'object' || typeof (values as ArrayLike<number>).length !== 'number') {
    typeError(argument, 'must be an array of numbers');
  }
  const list = values as ArrayLike<unknown>;
  const out = new Float64Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) rangeError(`${argument}[${i}]`, 'must be a finite number');
    out[i] = v;
  }
  return out;
}

function toRanking<Id extends string | number>(ordered: readonly Id[], ids: Uint32Array, scores: Float64Array): FusedItem<Id>[] {
  const out: FusedItem<Id>[] = [];
  for (let i = 0; i < ids.length; i++) out.push({ id: ordered[ids[i]!]!, score: scores[i]! });
  return out;
}

/** Score fusion for adaptive re-retrieval and hybrid ranking. Ties rank by smaller id. */
export const Fusion = {
  /**
   * ARR fused scores (1-ω)·first + ω·second, element-wise. first/second hold
   * one equal-length row of scores per query; omega has one weight per query
   * (a single number means one query).
   */
  arr(first: ArrayLike<number>, second: ArrayLike<number>, omega: number | ArrayLike<number>): Promise<Float32Array> {
    const a = checkFiniteArray(first, 'first');
    const b = checkFiniteArray(second, 'second');
    if (a.length !== b.length) rangeError('second', `must have the same length as first (${a.length}, got ${b.length})`);
    const queryCount: unknown = typeof omega === 'number' ? 1 : (omega as ArrayLike<number> | null)?.length;
    if (typeof queryCount !== 'number') typeError('omega', 'must be a number or one number per query');
    const weights = toOmega(omega, queryCount);
    if (queryCount === 0 || a.length % queryCount !== 0) rangeError('first', `must hold ${queryCount} equal-length rows (one per ω)`);
    return loadAddon().addon.fuseArr(a, b, weights);
  },

  /**
   * Weighted sum over the union of candidates of several named score lists,
   * after min-max normalising each list to [0, 1] (a list with equal scores
   * maps to 1; a candidate missing from a list gets 0 from it).
   */
  weightedSum<Id extends string | number>(lists: Readonly<Record<string, ScoreList<Id>>>, weights: Readonly<Record<string, number>>): Promise<FusedItem<Id>[]> {
    if (lists === null || typeof lists !== 'object') typeError('lists', 'must be an object of named score lists');
    if (weights === null || typeof weights !== 'object') typeError('weights', 'must be an object with one weight per list');
    const names = Object.keys(lists);
    for (const name of Object.keys(weights)) {
      if (!names.includes(name)) rangeError(`weights.${name}`, 'names no list');
    }
    const idLists = names.map((name) => {
      const list = lists[name];
      if (list === null || typeof list !== 'object' || !Array.isArray(list.ids)) typeError(`lists.${name}`, 'must be { ids, scores }');
      checkUniqueIds(list.ids, `lists.${name}`);
      return list.ids;
    });
    const { ordered, index } = indexIds(idLists, 'lists');
    const offsets = new Uint32Array(names.length + 1);
    names.forEach((name, l) => {
      offsets[l + 1] = offsets[l]! + lists[name]!.ids.length;
    });
    const ids = new Uint32Array(offsets[names.length]!);
    const scores = new Float64Array(ids.length);
    const weightArray = new Float64Array(names.length);
    names.forEach((name, l) => {
      const list = lists[name]!;
      const weight = weights[name];
      if (typeof weight !== 'number' || !Number.isFinite(weight)) rangeError(`weights.${name}`, 'must be a finite number');
      weightArray[l] = weight;
      const listScores = checkFiniteNumbers(list.scores, `lists.${name}.scores`);
      if (listScores.length !== list.ids.length) rangeError(`lists.${name}.scores`, 'must have one score per id');
      list.ids.forEach((id, i) => {
        ids[offsets[l]! + i] = index.get(id)!;
      });
      scores.set(listScores, offsets[l]!);
    });
    return loadAddon()
      .addon.weightedSum(offsets, ids, scores, weightArray)
      .then((r) => toRanking(ordered, r.ids, r.scores));
  },

  /** Reciprocal rank fusion: Σ weight / (k + rank), ranks from 1 in each list's order (k = 60 by default). */
  rrf<Id extends string | number>(lists: readonly (readonly Id[])[] | Readonly<Record<string, readonly Id[]>>, options: { k?: number; weights?: readonly number[] } = {}): Promise<FusedItem<Id>[]> {
    if (lists === null || typeof lists !== 'object') typeError('lists', 'must be an array (or object) of ranked id lists');
    const entries: readonly (readonly Id[])[] = Array.isArray(lists) ? lists : Object.values(lists as Record<string, readonly Id[]>);
    const k = options.k ?? 60;
    if (typeof k !== 'number' || !(k >= 0) || !Number.isFinite(k)) rangeError('k', `must be a finite number >= 0 (got ${String(k)})`);
    let weights: Float64Array | undefined;
    if (options.weights !== undefined) {
      if (options.weights.length !== entries.length) rangeError('weights', 'must have one entry per list');
      weights = checkFiniteNumbers(options.weights, 'weights');
    }
    const { ordered, index } = indexIds(entries, 'lists');
    entries.forEach((list, l) => checkUniqueIds(list, `lists[${l}]`));
    const offsets = new Uint32Array(entries.length + 1);
    entries.forEach((list, l) => {
      offsets[l + 1] = offsets[l]! + list.length;
    });
    const ids = new Uint32Array(offsets[entries.length]!);
    entries.forEach((list, l) => list.forEach((id, i) => (ids[offsets[l]! + i] = index.get(id)!)));
    return loadAddon()
      .addon.rrf(offsets, ids, k, weights)
      .then((r) => toRanking(ordered, r.ids, r.scores));
  },
};
