/**
 * Training of the certainty gate, reproducible from the repository (`chronoql gate-rows`, then
 * `chronoql train-gate`): the first-round candidates of real questions with their features and
 * what became of them (right, a stale value, wrong), a softmax regression on them, temperature
 * scaling on questions it was not fitted on, and the adoption threshold chosen there.
 */
import { createHash } from 'node:crypto';
import { trainSoftmaxRegression } from '../src/learning/softmaxRegression.js';
import { Classifier } from '../src/native/index.js';
import type { QaItem } from './qaFile.js';
import { f1Score } from '../src/qa/answerMetrics.js';
import type { AskService } from '../src/qa/askService.js';
import { isReading } from '../src/qa/evidence.js';
import { DEFAULT_LAMBDA, type AdoptionThresholds, GATE_CLASSES, GATE_FEATURES, type GateClass, type GateModelFile } from '../src/qa/certaintyGate.js';
import { RetrievalMode } from '../src/qa/types.js';

/** An answer is right when its token F1 with a gold answer is at least this (partial names count: "Barnier"). */
export const CORRECT_F1 = 0.5;

export function isCorrect(answer: string | null, answers: readonly string[]): boolean {
  return answer !== null && answer !== '' && answers.length > 0 && f1Score(answer, answers) >= CORRECT_F1;
}

/**
 * GrowOVER's classes for a candidate: reliable when it is right; misleading when it is an
 * answer that no longer holds (the item's previous answer); uncertain otherwise.
 */
export function gateLabel(item: Pick<QaItem, 'answers' | 'previousAnswers'>, answer: string): GateClass {
  if (isCorrect(answer, item.answers)) return 'reliable';
  if (isCorrect(answer, item.previousAnswers)) return 'misleading';
  return 'uncertain';
}

export interface GateRow {
  /** Where the question comes from (a QA file and split). */
  source: string;
  question: string;
  label: number;
  isFact: boolean;
  answer: string;
  features: number[];
}

/** Each item's candidates, in order: what a gate scores and learns from. */
export type CandidateSource = (items: readonly QaItem[]) => Promise<Array<Array<{ answer: string; isFact: boolean; features: readonly number[] }>>>;

/** The first-round candidates of each item asked as GATED, with the certainty gate's features. */
export function firstRoundCandidates(ask: AskService): CandidateSource {
  return async (items) =>
    (
      await ask.firstRoundCandidates(
        items.map((item) => ({ question: item.question, asOf: item.asOf, retrieval: RetrievalMode.GATED })),
        new Date(),
      )
    ).map((candidates) =>
      candidates.map((candidate) => ({ answer: candidate.answer, isFact: candidate.evidence.kind === 'FACT', features: candidate.features })),
    );
}

/**
 * The readings of each item's period in the text, with the readings' gate's features (none for an
 * item without a period). The page's passages read beside them are left out: they answer only
 * where no reading does and are never adopted, so the gate's adoption threshold is calibrated on
 * what it may adopt.
 */
export function periodReadingCandidates(ask: AskService): CandidateSource {
  return async (items) =>
    (
      await ask.periodReadingCandidates(
        items.map((item) => ({ question: item.question, asOf: item.asOf })),
        new Date(),
      )
    ).map((readings) =>
      readings
        .filter(({ candidate }) => isReading(candidate.evidence))
        .map(({ candidate, features }) => ({ answer: candidate.answer, isFact: false, features })),
    );
}

/** The candidates of every item with their features and labels. */
export async function collectGateRows(
  candidatesOf: CandidateSource,
  items: readonly QaItem[],
  source: string,
  onProgress?: (done: number, total: number) => void,
): Promise<GateRow[]> {
  const rows: GateRow[] = [];
  for (let start = 0; start < items.length; start += 64) {
    const batch = items.slice(start, start + 64);
    const candidates = await candidatesOf(batch);
    candidates.forEach((ofItem, i) => {
      for (const candidate of ofItem) {
        if (candidate.answer === '') continue;
        rows.push({
          source,
          question: `${batch[i]!.question}@${batch[i]!.asOf?.toISOString() ?? ''}`,
          label: GATE_CLASSES.indexOf(gateLabel(batch[i]!, candidate.answer)),
          isFact: candidate.isFact,
          answer: candidate.answer,
          features: [...candidate.features],
        });
      }
    });
    onProgress?.(Math.min(start + 64, items.length), items.length);
  }
  return rows;
}

/** Units of the gate's hidden layer. */
const GATE_HIDDEN_UNITS = 32;

/** Which part a question is in, by a hash of its text: the same question always lands on the same side. */
function inCalibrationPart(question: string): boolean {
  return createHash('sha256').update(question).digest()[0]! % 4 === 0;
}

function softmaxPower(p: readonly number[], inverseTemperature: number): number[] {
  const scaled = p.map((value) => Math.max(value, 1e-12) ** inverseTemperature);
  const total = scaled.reduce((a, b) => a + b, 0);
  return scaled.map((value) => value / total);
}

interface ChosenAnswer {
  p: number;
  correct: boolean;
  isFact: boolean;
}

/** A kind of answer with fewer calibration questions than this shares the threshold of all answers: one wrong answer among a few would set it. */
const MIN_THRESHOLD_SUPPORT = 100;

/** The lowest p(reliable) from which at least `precision` of the answers are right (1 when none is). */
function lowestThreshold(answers: readonly ChosenAnswer[], precision: number): number {
  const ranked = [...answers].sort((a, b) => b.p - a.p);
  let threshold = 1;
  let correct = 0;
  ranked.forEach((answer, i) => {
    if (answer.correct) correct++;
    // Only between distinct values: a threshold adopts everything at or above it.
    if (correct / (i + 1) >= precision && (i + 1 === ranked.length || ranked[i + 1]!.p < answer.p)) threshold = answer.p;
  });
  return threshold;
}

export interface GateTrainingReport {
  rows: Record<GateClass, number>;
  fitRows: number;
  calibrationRows: number;
  temperature: number;
  adoptAt: AdoptionThresholds;
  /** On the calibration questions, each with its most trusted candidate. */
  calibration: Adoption;
}

/**
 * Fits the gate on three quarters of the questions (by hash), scales its temperature on the
 * rest, and there chooses, for facts and for spans of text apart, the lowest p(reliable) from
 * which at least `precision` of the most trusted answers are right. The calibration rows are
 * scored by the addon's Classifier, as `ask` scores them.
 */
export async function trainGateModel(
  rows: readonly GateRow[],
  options: {
    precision: number;
    lambda?: number;
    /** Rows only to fit on, never to calibrate or choose thresholds on: items generated from the store's own facts, all easy and right, would flatter them. */
    fitOnly?: readonly GateRow[];
    /** What a row's features are (default: the certainty gate's). */
    features?: readonly string[];
    /** Units of its hidden layer (default GATE_HIDDEN_UNITS; 0: linear). */
    hidden?: number;
  },
): Promise<{ model: GateModelFile; report: GateTrainingReport }> {
  const fit = [...rows.filter((row) => !inCalibrationPart(row.question)), ...(options.fitOnly ?? [])];
  const calibration = rows.filter((row) => inCalibrationPart(row.question));
  if (fit.length === 0 || calibration.length === 0) throw new RangeError('train-gate needs rows of more questions (none fell in one of its two parts)');
  // One hidden layer: how far a reader score can be trusted depends on whether the answer is a fact, the type matches, the names are near.
  const { model: classifier } = trainSoftmaxRegression(fit, {
    classes: GATE_CLASSES,
    features: options.features ?? GATE_FEATURES,
    hidden: options.hidden ?? GATE_HIDDEN_UNITS,
    iterations: 800,
    learningRate: 0.01,
    l2: 1e-4,
  });
  const probabilities = await Classifier.fromJson(classifier).scoreBatch(calibration.map((row) => row.features));
  const classes = GATE_CLASSES.length;
  const raw = calibration.map((_, r) => Array.from(probabilities.subarray(classes * r, classes * (r + 1))));
  // Temperature scaling: the inverse temperature that maximises the calibration rows' likelihood.
  let best = { inverse: 1, nll: Infinity };
  for (let inverse = 0.25; inverse <= 4.0001; inverse += 0.025) {
    const nll = raw.reduce((sum, p, r) => sum - Math.log(Math.max(softmaxPower(p, inverse)[calibration[r]!.label]!, 1e-12)), 0);
    if (nll < best.nll) best = { inverse, nll };
  }
  // Scaling the output layer scales the logits.
  const output = classifier.layers.at(-1)!;
  const scaledOutput = {
    ...output,
    weights: output.weights.map((row) => row.map((w) => Number((w * best.inverse).toPrecision(7)))),
    bias: output.bias.map((b) => Number((b * best.inverse).toPrecision(7))),
  };
  const scaled = { ...classifier, layers: [...classifier.layers.slice(0, -1), scaledOutput] };
  const answers = mostTrusted(
    calibration,
    raw.map((p) => softmaxPower(p, best.inverse)[0]!),
  );
  const pooled = lowestThreshold(answers, options.precision);
  const ownThreshold = (kind: ChosenAnswer[]): number => (kind.length >= MIN_THRESHOLD_SUPPORT ? lowestThreshold(kind, options.precision) : pooled);
  const adoptAt = { fact: ownThreshold(answers.filter((answer) => answer.isFact)), text: ownThreshold(answers.filter((answer) => !answer.isFact)) };
  const count = (label: number): number =>
    rows.filter((row) => row.label === label).length + (options.fitOnly ?? []).filter((row) => row.label === label).length;
  return {
    model: {
      classifier: scaled,
      lambda: options.lambda ?? DEFAULT_LAMBDA,
      adoptAt: { fact: Number(adoptAt.fact.toPrecision(6)), text: Number(adoptAt.text.toPrecision(6)) },
    },
    report: {
      rows: { reliable: count(0), misleading: count(1), uncertain: count(2) },
      fitRows: fit.length,
      calibrationRows: calibration.length,
      temperature: 1 / best.inverse,
      adoptAt,
      calibration: adoption(answers, adoptAt),
    },
  };
}

/** Each question's most trusted candidate, as ask chooses, with the calibrated p(reliable) of each row. */
function mostTrusted(rows: readonly GateRow[], reliable: readonly number[]): ChosenAnswer[] {
  const chosen = new Map<string, ChosenAnswer>();
  rows.forEach((row, r) => {
    const current = chosen.get(row.question);
    if (!current || reliable[r]! > current.p) chosen.set(row.question, { p: reliable[r]!, correct: row.label === 0, isFact: row.isFact });
  });
  return [...chosen.values()];
}

interface Adoption {
  questions: number;
  adopted: number;
  adoptedCorrect: number;
  precision: number;
}

function adoption(answers: readonly ChosenAnswer[], adoptAt: AdoptionThresholds): Adoption {
  const adopted = answers.filter((answer) => answer.p >= (answer.isFact ? adoptAt.fact : adoptAt.text));
  const adoptedCorrect = adopted.filter((answer) => answer.correct).length;
  return { questions: answers.length, adopted: adopted.length, adoptedCorrect, precision: adopted.length === 0 ? 0 : adoptedCorrect / adopted.length };
}

export interface GateRecalibrationReport {
  kind: keyof AdoptionThresholds;
  /** The threshold before and after. */
  adoptAt: { before: number; after: number };
  /** The questions whose most trusted answer is of that kind, at the old threshold and at the new one. */
  before: Adoption;
  after: Adoption;
}

/**
 * Chooses one kind's adoption threshold again, keeping the gate's weights and temperature: on rows
 * of questions it was neither fitted nor calibrated on, the lowest p(reliable) from which at least
 * `precision` of the most trusted answers of that kind are right. For a kind whose own
 * calibration questions were too few, so that it shared the pooled threshold (facts, among
 * mostly SQuAD questions).
 */
export async function recalibrateGate(
  gate: GateModelFile,
  rows: readonly GateRow[],
  options: { kind: keyof AdoptionThresholds; precision: number },
): Promise<{ model: GateModelFile; report: GateRecalibrationReport }> {
  const probabilities = await Classifier.fromJson(gate.classifier).scoreBatch(rows.map((row) => row.features));
  const ofKind = mostTrusted(
    rows,
    rows.map((_, r) => probabilities[GATE_CLASSES.length * r]!),
  ).filter((answer) => answer.isFact === (options.kind === 'fact'));
  if (ofKind.length < MIN_THRESHOLD_SUPPORT) {
    throw new RangeError(
      `recalibrate-gate needs at least ${MIN_THRESHOLD_SUPPORT} questions whose most trusted answer is a ${options.kind}; the rows have ${ofKind.length}`,
    );
  }
  const adoptAt = { ...gate.adoptAt, [options.kind]: Number(lowestThreshold(ofKind, options.precision).toPrecision(6)) };
  return {
    model: { ...gate, adoptAt },
    report: {
      kind: options.kind,
      adoptAt: { before: gate.adoptAt[options.kind], after: adoptAt[options.kind] },
      before: adoption(ofKind, gate.adoptAt),
      after: adoption(ofKind, adoptAt),
    },
  };
}
