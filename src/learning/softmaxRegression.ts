/**
 * Multinomial logistic regression trained by full-batch Adam on the cross-entropy with L2,
 * written out in the addon Classifier's JSON format (a linear layer on standardised
 * features). Full batches and a zero start make training deterministic: the same rows give
 * the same weights, so a committed model can be reproduced by its training command.
 */
import type { ClassifierModelJson } from '../native/index.js';

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

/** A linear layer on standardised features in the Classifier's JSON format, at float32-like precision. */
function linearModel(
  options: { classes: readonly string[]; features: readonly string[] },
  normalization: { mean: number[]; std: number[] },
  weights: number[][],
  bias: number[],
): ClassifierModelJson {
  const round = (value: number): number => Number(value.toPrecision(7));
  return {
    type: 'linear',
    classes: [...options.classes],
    features: [...options.features],
    normalization: { mean: normalization.mean.map(round), std: normalization.std.map(round) },
    layers: [{ weights: weights.map((row) => row.map(round)), bias: bias.map(round) }],
  };
}

export function trainSoftmaxRegression(rows: readonly TrainingRow[], options: SoftmaxTrainingOptions): TrainedModel {
  const width = options.features.length;
  const classes = options.classes.length;
  if (rows.length === 0) throw new RangeError('training needs at least one row');
  rows.forEach((row, r) => {
    if (row.features.length !== width) throw new RangeError(`row ${r} has ${row.features.length} features, expected ${width}`);
    if (!Number.isInteger(row.label) || row.label < 0 || row.label >= classes) throw new RangeError(`row ${r} has label ${row.label}, expected 0..${classes - 1}`);
    if (!row.features.every(Number.isFinite)) throw new RangeError(`row ${r} has a feature that is NaN or Infinity`);
  });
  const { iterations = 400, learningRate = 0.05, l2 = 1e-4 } = options;
  const { mean, std } = standardisation(rows, width);
  const x = rows.map((row) => row.features.map((v, j) => (v - mean[j]!) / std[j]!));
  const counts = new Array<number>(classes).fill(0);
  for (const row of rows) counts[row.label]! += 1;
  const classWeight = counts.map((count) => (options.balanceClasses && count > 0 ? rows.length / (classes * count) : 1));
  const rowWeight = rows.map((row) => (row.weight ?? 1) * classWeight[row.label]!);
  const totalWeight = rowWeight.reduce((a, b) => a + b, 0);

  // Parameters: classes × (width + 1), the last column the bias.
  const size = classes * (width + 1);
  const params = new Float64Array(size);
  const adam = new Adam(params, learningRate, l2, (i) => i % (width + 1) !== width);
  const gradient = new Float64Array(size);
  const probabilities = new Float64Array(classes);
  let loss = 0;
  const forward = (features: readonly number[]): void => {
    let max = -Infinity;
    for (let c = 0; c < classes; c++) {
      let z = params[c * (width + 1) + width]!;
      for (let j = 0; j < width; j++) z += params[c * (width + 1) + j]! * features[j]!;
      probabilities[c] = z;
      max = Math.max(max, z);
    }
    let sum = 0;
    for (let c = 0; c < classes; c++) sum += probabilities[c] = Math.exp(probabilities[c]! - max);
    for (let c = 0; c < classes; c++) probabilities[c]! /= sum;
  };
  for (let step = 1; step <= iterations; step++) {
    gradient.fill(0);
    loss = 0;
    x.forEach((features, r) => {
      forward(features);
      const w = rowWeight[r]! / totalWeight;
      loss -= w * Math.log(Math.max(probabilities[rows[r]!.label]!, 1e-12));
      for (let c = 0; c < classes; c++) {
        const error = w * (probabilities[c]! - (c === rows[r]!.label ? 1 : 0));
        for (let j = 0; j < width; j++) gradient[c * (width + 1) + j]! += error * features[j]!;
        gradient[c * (width + 1) + width]! += error;
      }
    });
    adam.step(gradient);
  }
  return {
    loss,
    model: linearModel(
      options,
      { mean, std },
      Array.from({ length: classes }, (_, c) => Array.from(params.subarray(c * (width + 1), c * (width + 1) + width))),
      Array.from({ length: classes }, (_, c) => params[c * (width + 1) + width]!),
    ),
  };
}

/** The candidates of one question: feature rows and which of them are correct. */
export interface CandidateGroup {
  features: readonly (readonly number[])[];
  correct: readonly boolean[];
}

/**
 * A linear ranker trained listwise (a conditional logit): for each group, a softmax over its
 * candidates, maximising the probability of the correct ones, which is what picking the
 * top-scored candidate needs. Written as a two-class model (`classes[0]` scores w·x, the
 * other 0), so p(classes[0]) = sigmoid(w·x) orders candidates as the ranker does.
 */
export function trainListwiseRanker(
  groups: readonly CandidateGroup[],
  options: { classes: readonly [string, string]; features: readonly string[]; iterations?: number; learningRate?: number; l2?: number },
): TrainedModel {
  const width = options.features.length;
  const usable = groups.filter((group) => group.correct.some(Boolean));
  if (usable.length === 0) throw new RangeError('training needs at least one group with a correct candidate');
  const allRows = usable.flatMap((group) => group.features.map((features) => ({ features, label: 0 })));
  allRows.forEach((row, r) => {
    if (row.features.length !== width || !row.features.every(Number.isFinite)) throw new RangeError(`candidate ${r} has ${row.features.length} features or a non-finite one, expected ${width} finite`);
  });
  const { mean, std } = standardisation(allRows, width);
  const standardised = usable.map((group) => group.features.map((row) => row.map((v, j) => (v - mean[j]!) / std[j]!)));
  const { iterations = 300, learningRate = 0.05, l2 = 1e-4 } = options;
  const w = new Float64Array(width);
  const adam = new Adam(w, learningRate, l2);
  let loss = 0;
  for (let step = 1; step <= iterations; step++) {
    const gradient = new Float64Array(width);
    loss = 0;
    standardised.forEach((rows, g) => {
      const scores = rows.map((row) => row.reduce((sum, x, j) => sum + x * w[j]!, 0));
      const max = Math.max(...scores);
      const exps = scores.map((score) => Math.exp(score - max));
      const total = exps.reduce((a, b) => a + b, 0);
      const p = exps.map((e) => e / total);
      const correct = p.reduce((sum, pi, i) => sum + (usable[g]!.correct[i] ? pi : 0), 0);
      loss -= Math.log(Math.max(correct, 1e-12)) / usable.length;
      rows.forEach((row, i) => {
        const coefficient = (p[i]! - (usable[g]!.correct[i] ? p[i]! / correct : 0)) / usable.length;
        for (let j = 0; j < width; j++) gradient[j]! += coefficient * row[j]!;
      });
    });
    adam.step(gradient);
  }
  return { loss, model: linearModel(options, { mean, std }, [Array.from(w), new Array<number>(width).fill(0)], [0, 0]) };
}
