/**
 * `chronoql eval-labeling`: per-label precision, recall and F1 and a confusion matrix of a
 * sentence labeler on labeled old/new sentence pairs, and the accuracy of the false-change
 * filter on labeled fact pairs.
 */
import { readFile } from 'node:fs/promises';
import type { SentenceLabeler } from '../src/ingest/sentenceLabeler.js';
import { classifyValueEdit } from '../src/ingest/valueEdits.js';
import { folded } from '../src/text/normalize.js';

export type SentenceGold = 'UNCHANGED' | 'CHANGED' | 'NEW';
const LABELS: SentenceGold[] = ['UNCHANGED', 'CHANGED', 'NEW'];

export interface SentenceCase {
  id: string;
  source: string;
  old: string[];
  new: string[];
  gold: Array<{ label: SentenceGold; previous: number | null; also?: number[] }>;
}

export interface FactPair {
  source: string;
  attribute: string;
  before: string;
  after: string;
  gold: 'REFINED' | 'UPDATED';
}

export interface LabelScores {
  precision: number;
  recall: number;
  f1: number;
  support: number;
}

export interface LabelingReport {
  labeler: string;
  cases: number;
  pairs: number;
  perLabel: Record<SentenceGold | 'DELETED', LabelScores>;
  /** gold label → predicted label → count, over the new sentences. */
  confusion: Record<SentenceGold, Record<SentenceGold, number>>;
  /** NEW sentences the labeler marked as not confident. */
  unconfidentNew: number;
  seconds: number;
}

async function readLines<T>(path: string): Promise<T[]> {
  return (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line) as T;
      } catch (error) {
        throw new RangeError(`${path}:${i + 1}: ${(error as Error).message}`);
      }
    });
}

export const readSentenceCases = (path: string): Promise<SentenceCase[]> => readLines<SentenceCase>(path);
export const readFactPairs = (path: string): Promise<FactPair[]> => readLines<FactPair>(path);

/**
 * Which half a case is in: demo-corpus cases alternate (tune, held-out, …); the hand-edited
 * cases (merges, splits, typos, …) are all held out.
 */
export function splitCases(cases: readonly SentenceCase[], part: 'tune' | 'held-out' | 'all'): SentenceCase[] {
  if (part === 'all') return [...cases];
  let demo = 0;
  return cases.filter((c) => {
    const inTune = c.id.startsWith('hand-') ? false : demo++ % 2 === 0;
    return part === 'tune' ? inTune : !inTune;
  });
}

function scores(truePositive: number, predicted: number, actual: number): LabelScores {
  const precision = predicted === 0 ? 0 : truePositive / predicted;
  const recall = actual === 0 ? 0 : truePositive / actual;
  const round = (x: number): number => Number(x.toFixed(3));
  return {
    precision: round(precision),
    recall: round(recall),
    f1: round(precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)),
    support: actual,
  };
}

/** Sees each case's predicted labels and DELETED old indices, for measures beyond the report's. */
export type CaseObserver = (labeled: SentenceCase, predicted: SentenceGold[], deleted: number[]) => void;

export async function evaluateLabeler(labeler: SentenceLabeler, cases: readonly SentenceCase[], observe?: CaseObserver): Promise<LabelingReport> {
  const confusion = Object.fromEntries(LABELS.map((g) => [g, Object.fromEntries(LABELS.map((p) => [p, 0]))])) as LabelingReport['confusion'];
  const deleted = { truePositive: 0, predicted: 0, actual: 0 };
  let unconfidentNew = 0;
  const started = performance.now();
  for (const c of cases) {
    const previous = c.old.map((text, i) => ({ id: String(i), text, startsParagraph: i === 0 }));
    const current = c.new.map((text, i) => ({ text, startsParagraph: i === 0 }));
    const { alignments, deletedIds } = await labeler.label(previous, current);
    const predicted = alignments.map((alignment): SentenceGold => (alignment.kind === 'KEPT' || alignment.kind === 'RELOCATED' ? 'UNCHANGED' : alignment.kind));
    alignments.forEach((alignment, i) => {
      if (alignment.kind === 'NEW' && alignment.confident === false) unconfidentNew++;
      confusion[c.gold[i]!.label][predicted[i]!]++;
    });
    observe?.(c, predicted, deletedIds.map(Number));
    const succeeded = new Set(c.gold.flatMap((g) => (g.previous === null ? [] : [g.previous, ...(g.also ?? [])])));
    const goldDeleted = new Set(c.old.map((_, i) => i).filter((i) => !succeeded.has(i)));
    const predictedDeleted = new Set(deletedIds.map(Number));
    deleted.actual += goldDeleted.size;
    deleted.predicted += predictedDeleted.size;
    for (const i of predictedDeleted) if (goldDeleted.has(i)) deleted.truePositive++;
  }
  const column = (label: SentenceGold): number => LABELS.reduce((sum, g) => sum + confusion[g][label], 0);
  const row = (label: SentenceGold): number => LABELS.reduce((sum, p) => sum + confusion[label][p], 0);
  return {
    labeler: labeler.name,
    cases: cases.length,
    pairs: LABELS.reduce((sum, label) => sum + row(label), 0),
    perLabel: {
      UNCHANGED: scores(confusion.UNCHANGED.UNCHANGED, column('UNCHANGED'), row('UNCHANGED')),
      CHANGED: scores(confusion.CHANGED.CHANGED, column('CHANGED'), row('CHANGED')),
      NEW: scores(confusion.NEW.NEW, column('NEW'), row('NEW')),
      DELETED: scores(deleted.truePositive, deleted.predicted, deleted.actual),
    },
    confusion,
    unconfidentNew,
    seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
  };
}

/** The false-change filter: REFINED (or no change at all) against UPDATED, for the current differ and for plain folded comparison. */
export function evaluateFactPairs(
  pairs: readonly FactPair[],
): Record<string, { accuracy: number; falseChangesCaught: number; realChangesKept: number; pairs: number }> {
  const methods: Record<string, (before: string, after: string) => 'REFINED' | 'UPDATED'> = {
    'folded-equality': (before, after) => (folded(before) === folded(after) ? 'REFINED' : 'UPDATED'),
    dynaquest: (before, after) => (classifyValueEdit(before, after).kind === 'UPDATED' ? 'UPDATED' : 'REFINED'),
  };
  return Object.fromEntries(
    Object.entries(methods).map(([name, classify]) => {
      const predicted = pairs.map((pair) => classify(pair.before, pair.after));
      const round = (x: number): number => Number(x.toFixed(3));
      const share = (gold: 'REFINED' | 'UPDATED'): number => {
        const of = pairs.map((pair, i) => ({ pair, i })).filter(({ pair }) => pair.gold === gold);
        return of.length === 0 ? 0 : round(of.filter(({ i }) => predicted[i] === gold).length / of.length);
      };
      return [
        name,
        {
          accuracy: round(predicted.filter((p, i) => p === pairs[i]!.gold).length / pairs.length),
          falseChangesCaught: share('REFINED'),
          realChangesKept: share('UPDATED'),
          pairs: pairs.length,
        },
      ];
    }),
  );
}
