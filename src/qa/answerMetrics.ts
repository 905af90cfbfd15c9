/**
 * Answer metrics with SQuAD's normalisation (lowercase, no punctuation, no articles, single
 * spaces): exact match, token F1 (best over the gold answers) and match accuracy (a gold
 * answer occurs in the prediction, as RetrievalQA scores free-form answers).
 */
import { holdsWords, normalizeAnswer, spacedWords } from '../text/normalize.js';

export function exactMatch(prediction: string, answers: readonly string[]): number {
  const predicted = normalizeAnswer(prediction);
  return answers.some((answer) => normalizeAnswer(answer) === predicted) ? 1 : 0;
}

function tokenF1(prediction: string, answer: string): number {
  const predicted = normalizeAnswer(prediction).split(' ').filter(Boolean);
  const gold = normalizeAnswer(answer).split(' ').filter(Boolean);
  if (predicted.length === 0 || gold.length === 0) return predicted.length === gold.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const token of gold) counts.set(token, (counts.get(token) ?? 0) + 1);
  let common = 0;
  for (const token of predicted) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      common++;
      counts.set(token, left - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / predicted.length;
  const recall = common / gold.length;
  return (2 * precision * recall) / (precision + recall);
}

export function f1Score(prediction: string, answers: readonly string[]): number {
  return Math.max(0, ...answers.map((answer) => tokenF1(prediction, answer)));
}

export function matchAccuracy(prediction: string, answers: readonly string[]): number {
  const predicted = spacedWords(prediction);
  return answers.some((answer) => holdsWords(predicted, normalizeAnswer(answer))) ? 1 : 0;
}

export interface AnswerScores {
  count: number;
  exactMatch: number;
  f1: number;
  match: number;
}

/** Mean EM, F1 and match (as percentages, like the SQuAD paper) over predictions and their gold answers. */
export function scoreAnswers(pairs: ReadonlyArray<{ prediction: string; answers: readonly string[] }>): AnswerScores {
  const n = pairs.length;
  const mean = (metric: (prediction: string, answers: readonly string[]) => number): number =>
    n === 0 ? 0 : Number(((100 * pairs.reduce((sum, pair) => sum + metric(pair.prediction, pair.answers), 0)) / n).toFixed(2));
  return { count: n, exactMatch: mean(exactMatch), f1: mean(f1Score), match: mean(matchAccuracy) };
}
