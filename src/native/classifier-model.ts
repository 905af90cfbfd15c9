/**
 * Parsing and validation of classifier models stored as JSON (a linear layer
 * or a small MLP with ReLU, softmax output, named classes and features with
 * standardisation statistics). Shared by the addon wrapper and the reference,
 * so both see identical float32 parameters.
 */
import { rangeError, typeError } from './args.js';
import type { ClassifierModelJson } from './types.js';

export interface ParsedLayer {
  inputs: number;
  outputs: number;
  /** outputs × inputs, row-major. */
  weights: Float32Array;
  bias: Float32Array;
  relu: boolean;
}

export interface ParsedClassifier {
  classes: string[];
  features: string[];
  mean: Float32Array;
  std: Float32Array;
  layers: ParsedLayer[];
}

function uniqueNames(value: unknown, argument: string, minimum: number): string[] {
  if (!Array.isArray(value)) typeError(argument, 'must be an array of names');
  if (value.length < minimum) rangeError(argument, `must list at least ${minimum} names`);
  const seen = new Set<string>();
  value.forEach((name: unknown, i) => {
    if (typeof name !== 'string' || name.length === 0) typeError(`${argument}[${i}]`, 'must be a non-empty string');
    if (seen.has(name)) rangeError(`${argument}[${i}]`, `repeats the name '${name}'`);
    seen.add(name);
  });
  return value as string[];
}

function finiteVector(value: unknown, length: number, argument: string): Float32Array {
  if (!Array.isArray(value)) typeError(argument, 'must be an array of numbers');
  if (value.length !== length) rangeError(argument, `must have ${length} numbers (got ${value.length})`);
  const out = new Float32Array(length);
  value.forEach((v: unknown, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) rangeError(`${argument}[${i}]`, 'must be a finite number');
    out[i] = v;
  });
  return out;
}

export function parseClassifierModel(json: string | ClassifierModelJson): ParsedClassifier {
  let model: unknown = json;
  if (typeof json === 'string') {
    try {
      model = JSON.parse(json);
    } catch (error) {
      rangeError('model', `is not valid JSON (${(error as Error).message})`);
    }
  }
  if (model === null || typeof model !== 'object') typeError('model', 'must be an object');
  const m = model as Record<string, unknown>;
  if (m.type !== undefined && m.type !== 'linear' && m.type !== 'mlp') rangeError('model.type', "must be 'linear' or 'mlp'");
  const classes = uniqueNames(m.classes, 'model.classes', 2);
  const features = uniqueNames(m.features, 'model.features', 1);

  let mean: Float32Array = new Float32Array(features.length);
  let std: Float32Array = new Float32Array(features.length).fill(1);
  if (m.normalization !== undefined) {
    const norm = m.normalization as Record<string, unknown> | null;
    if (norm === null || typeof norm !== 'object') typeError('model.normalization', 'must be an object with mean and std');
    mean = finiteVector(norm.mean, features.length, 'model.normalization.mean');
    std = finiteVector(norm.std, features.length, 'model.normalization.std');
    std.forEach((s, i) => {
      if (!(s > 0)) rangeError(`model.normalization.std[${i}]`, 'must be > 0');
    });
  }

  if (!Array.isArray(m.layers) || m.layers.length === 0) typeError('model.layers', 'must be a non-empty array');
  if (m.type === 'linear' && m.layers.length !== 1) rangeError('model.layers', "of a 'linear' model must hold exactly one layer");
  let inputs = features.length;
  const layers: ParsedLayer[] = m.layers.map((raw: unknown, l: number) => {
    const where = `model.layers[${l}]`;
    if (raw === null || typeof raw !== 'object') typeError(where, 'must be an object');
    const layer = raw as Record<string, unknown>;
    if (!Array.isArray(layer.weights) || layer.weights.length === 0) typeError(`${where}.weights`, 'must be a non-empty outputs × inputs array');
    const outputs = layer.weights.length;
    const weights = new Float32Array(outputs * inputs);
    layer.weights.forEach((row: unknown, o: number) => weights.set(finiteVector(row, inputs, `${where}.weights[${o}]`), o * inputs));
    const bias = finiteVector(layer.bias, outputs, `${where}.bias`);
    const activation = layer.activation ?? 'none';
    if (activation !== 'relu' && activation !== 'none') rangeError(`${where}.activation`, "must be 'relu' or 'none'");
    const last = l === (m.layers as unknown[]).length - 1;
    if (last && activation !== 'none') rangeError(`${where}.activation`, "must be 'none': the output layer feeds the softmax");
    if (last && outputs !== classes.length) rangeError(`${where}.weights`, `must have one row per class (${classes.length})`);
    const parsed: ParsedLayer = { inputs, outputs, weights, bias, relu: activation === 'relu' };
    inputs = outputs;
    return parsed;
  });
  return { classes, features, mean, std, layers };
}

/**
 * Feature rows as one Float32Array: accepts a flat Float32Array (batch ×
 * features), arrays of numbers in feature order, or records keyed by feature
 * name (every feature required).
 */
export function toFeatureMatrix(input: unknown, features: readonly string[], argument = 'features'): { data: Float32Array; rows: number } {
  const width = features.length;
  if (input instanceof Float32Array) {
    if (input.length % width !== 0) rangeError(argument, `must hold whole rows of ${width} values (got ${input.length})`);
    for (let i = 0; i < input.length; i++) {
      if (!Number.isFinite(input[i]!)) rangeError(argument, `row ${Math.floor(i / width)} feature '${features[i % width]}' is NaN or Infinity`);
    }
    return { data: input, rows: input.length / width };
  }
  if (!Array.isArray(input)) typeError(argument, 'must be a Float32Array, an array of rows, or an array of records');
  const data = new Float32Array(input.length * width);
  input.forEach((row: unknown, r: number) => {
    if (row === null || typeof row !== 'object') typeError(`${argument}[${r}]`, 'must be an array of numbers or a record of features');
    const isRow = Array.isArray(row) || ArrayBuffer.isView(row);
    for (let i = 0; i < width; i++) {
      const name = features[i]!;
      const value: unknown = isRow ? (row as ArrayLike<unknown>)[i] : (row as Record<string, unknown>)[name];
      if (isRow && (row as ArrayLike<unknown>).length !== width) rangeError(`${argument}[${r}]`, `must have ${width} values`);
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        rangeError(`${argument}[${r}]${isRow ? `[${i}]` : `.${name}`}`, 'must be a finite number');
      }
      data[r * width + i] = value;
    }
  });
  return { data, rows: input.length };
}
