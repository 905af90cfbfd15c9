/**
 * Multinomial logistic regression, or a small MLP (one ReLU hidden layer) when `hidden` is set,
 * trained by full-batch Adam on the cross-entropy with L2 and written out in the addon
 * Classifier's JSON format (layers on standardised features). Full batches and a fixed start
 * (zeros; a seeded draw for a hidden layer) make training deterministic: the same rows give the
 * same weights, so a committed model can be reproduced by its training command.
 */
import type { ClassifierModelJson } from '../native/index.js';
import { seededRandom } from './random.js';

export interface TrainingRow {
  features: readonly number[];
  /** Index into `classes`. */
  label: number;
  /** How much the row counts (default 1); used to balance rare classes. */
  weight?: number;
}

export interface SoftmaxTrainingOptions {
  classes: readonly string[];
  features: readonly string[];
  iterations?: number;
  learningRate?: number;
  l2?: number;
  /** Weight each class by the inverse of its frequency, so a rare class is not ignored. */
  balanceClasses?: boolean;
  /** Units of one ReLU hidden layer; 0 (the default) trains a linear model. */
  hidden?: number;
}

export interface TrainedModel {
  model: ClassifierModelJson;
  /** Mean cross-entropy on the training rows after the last step. */
  loss: number;
}

function standardisation(rows: readonly TrainingRow[], width: number): { mean: number[]; std: number[] } {
  const mean = new Array<number>(width).fill(0);
  const std = new Array<number>(width).fill(0);
  for (const row of rows) for (let j = 0; j < width; j++) mean[j]! += row.features[j]! / rows.length;
  for (const row of rows) for (let j = 0; j < width; j++) std[j]! += (row.features[j]! - mean[j]!) ** 2 / rows.length;
  // A constant feature carries nothing; a unit spread keeps it harmless instead of dividing by zero.
  return { mean, std: std.map((variance) => (variance > 1e-12 ? Math.sqrt(variance) : 1)) };
}

/** Adam on a flat parameter vector; L2 applies where `decays` says (not to biases). */
class Adam {
  private readonly m: Float64Array;
  private readonly v: Float64Array;
  private steps = 0;

  constructor(
    private readonly params: Float64Array,
    private readonly learningRate: number,
    private readonly l2: number,
    private readonly decays: (index: number) => boolean = () => true,
  ) {
    this.m = new Float64Array(params.length);
    this.v = new Float64Array(params.length);
  }

  step(gradient: Float64Array): void {
    this.steps++;
    for (let i = 0; i < this.params.length; i++) {
      const g = gradient[i]! + (this.decays(i) ? this.l2 * this.params[i]! : 0);
      this.m[i] = 0.9 * this.m[i]! + 0.1 * g;
      this.v[i] = 0.999 * this.v[i]! + 0.001 * g * g;
      this.params[i]! -= (this.learningRate * (this.m[i]! / (1 - 0.9 ** this.steps))) / (Math.sqrt(this.v[i]! / (1 - 0.999 ** this.steps)) + 1e-8);
    }
  }
}

/** Where each layer's weights (outputs × inputs, row-major) and biases sit in the flat parameter vector. */
interface LayerShape {
  inputs: number;
  outputs: number;
  weights: number;
  bias: number;
}

function layerShapes(sizes: readonly number[]): LayerShape[] {
  let offset = 0;
  return sizes.slice(1).map((outputs, l) => {
    const inputs = sizes[l]!;
    const shape = { inputs, outputs, weights: offset, bias: offset + inputs * outputs };
    offset += (inputs + 1) * outputs;
    return shape;
  });
}

export function trainSoftmaxRegression(rows: readonly TrainingRow[], options: SoftmaxTrainingOptions): TrainedModel {
  const width = options.features.length;
  const classes = options.classes.length;
  if (rows.length === 0) throw new RangeError('training needs at least one row');
  rows.forEach((row, r) => {
    if (row.features.length !== width) throw new RangeError(`row ${r} has ${row.features.length} features, expected ${width}`);
    if (!Number.isInteger(row.label) || row.label < 0 || row.label >= classes)
      throw new RangeError(`row ${r} has label ${row.label}, expected 0..${classes - 1}`);
    if (!row.features.every(Number.isFinite)) throw new RangeError(`row ${r} has a feature that is NaN or Infinity`);
  });
  const { iterations = 400, learningRate = 0.05, l2 = 1e-4, hidden = 0 } = options;
  const { mean, std } = standardisation(rows, width);
  const x = rows.map((row) => Float64Array.from(row.features, (v, j) => (v - mean[j]!) / std[j]!));
  const counts = new Array<number>(classes).fill(0);
  for (const row of rows) counts[row.label]! += 1;
  const classWeight = counts.map((count) => (options.balanceClasses && count > 0 ? rows.length / (classes * count) : 1));
  const rowWeight = rows.map((row) => (row.weight ?? 1) * classWeight[row.label]!);
  const totalWeight = rowWeight.reduce((a, b) => a + b, 0);

  const shapes = layerShapes(hidden > 0 ? [width, hidden, classes] : [width, classes]);
  const last = shapes.length - 1;
  const size = shapes[last]!.bias + classes;
  const params = new Float64Array(size);
  const draw = seededRandom(0x5eed);
  // He-uniform start for the hidden layer (a zero start would keep its units identical); the output layer starts at zero.
  shapes.slice(0, last).forEach((shape) => {
    const bound = Math.sqrt(6 / shape.inputs);
    for (let i = 0; i < shape.inputs * shape.outputs; i++) params[shape.weights + i] = bound * (2 * draw() - 1);
  });
  const isBias = (i: number): boolean => shapes.some((shape) => i >= shape.bias && i < shape.bias + shape.outputs);
  const adam = new Adam(params, learningRate, l2, (i) => !isBias(i));
  const gradient = new Float64Array(size);
  // activations[0] is the input; activations[l + 1] the output of layer l (softmax probabilities for the last).
  const activations: Float64Array[] = [new Float64Array(width), ...shapes.map((shape) => new Float64Array(shape.outputs))];
  const deltas = shapes.map((shape) => new Float64Array(shape.outputs));
  const forward = (features: Float64Array): Float64Array => {
    activations[0] = features;
    shapes.forEach((shape, l) => {
      const input = activations[l]!;
      const output = activations[l + 1]!;
      for (let o = 0; o < shape.outputs; o++) {
        let z = params[shape.bias + o]!;
        const row = shape.weights + o * shape.inputs;
        for (let j = 0; j < shape.inputs; j++) z += params[row + j]! * input[j]!;
        output[o] = l < last && z < 0 ? 0 : z;
      }
    });
    const logits = activations[last + 1]!;
    const max = Math.max(...logits);
    let sum = 0;
    for (let c = 0; c < classes; c++) sum += logits[c] = Math.exp(logits[c]! - max);
    for (let c = 0; c < classes; c++) logits[c]! /= sum;
    return logits;
  };
  let loss = 0;
  for (let step = 1; step <= iterations; step++) {
    gradient.fill(0);
    loss = 0;
    x.forEach((features, r) => {
      const probabilities = forward(features);
      const w = rowWeight[r]! / totalWeight;
      loss -= w * Math.log(Math.max(probabilities[rows[r]!.label]!, 1e-12));
      for (let c = 0; c < classes; c++) deltas[last]![c] = w * (probabilities[c]! - (c === rows[r]!.label ? 1 : 0));
      for (let l = last; l >= 0; l--) {
        const shape = shapes[l]!;
        const input = activations[l]!;
        const delta = deltas[l]!;
        const below = l > 0 ? deltas[l - 1]!.fill(0) : null;
        for (let o = 0; o < shape.outputs; o++) {
          const error = delta[o]!;
          if (error === 0) continue;
          const row = shape.weights + o * shape.inputs;
          for (let j = 0; j < shape.inputs; j++) {
            gradient[row + j]! += error * input[j]!;
            if (below) below[j]! += error * params[row + j]!;
          }
          gradient[shape.bias + o]! += error;
        }
        // Through the ReLU: no gradient where the unit was off.
        if (below) for (let j = 0; j < shape.inputs; j++) if (input[j] === 0) below[j] = 0;
      }
    });
    adam.step(gradient);
  }
  const round = (value: number): number => Number(value.toPrecision(7));
  return {
    loss,
    model: {
      type: hidden > 0 ? 'mlp' : 'linear',
      classes: [...options.classes],
      features: [...options.features],
      normalization: { mean: mean.map(round), std: std.map(round) },
      layers: shapes.map((shape, l) => ({
        weights: Array.from({ length: shape.outputs }, (_, o) =>
          Array.from(params.subarray(shape.weights + o * shape.inputs, shape.weights + (o + 1) * shape.inputs), round),
        ),
        bias: Array.from(params.subarray(shape.bias, shape.bias + shape.outputs), round),
        ...(l < last ? { activation: 'relu' as const } : {}),
      })),
    },
  };
}
