/**
 * An `EvaluationOverTime` shaped like a real `chronoql eval` run on the store: three quarterly
 * snapshots, the three retrieval modes, QA and dialogue items. The first snapshot has nothing
 * to compare with, so all its items are NEW and its CHANGED and UNCHANGED cells are absent.
 * ALL is the item-weighted mean of the types, as the evaluation computes it.
 */
import type { CellType, EvaluationCell, EvaluationOverTime, ModeReliability } from '../../eval/overTime/result.js';

const SNAPSHOTS = ['2024-01-01', '2024-04-01', '2024-07-01'];
const MODES = ['NEVER', 'ALWAYS', 'ADAPTIVE'];

/** mode, snapshot, type, items, EM, F1, adopted, adopted F1, not-adopted F1 */
type Row = [string, string, CellType, number, number, number, number, number | null, number | null];

const ROWS: Row[] = [
  ['NEVER', '2024-01-01', 'NEW', 120, 8.3, 14.6, 18, 41.2, 9.9],
  ['NEVER', '2024-01-01', 'ALL', 120, 8.3, 14.6, 18, 41.2, 9.9],
  ['NEVER', '2024-04-01', 'NEW', 40, 5.0, 11.2, 4, 35.0, 8.6],
  ['NEVER', '2024-04-01', 'CHANGED', 25, 4.0, 9.8, 0, null, 9.8],
  ['NEVER', '2024-04-01', 'UNCHANGED', 90, 31.1, 38.4, 31, 61.7, 26.1],
  ['NEVER', '2024-04-01', 'ALL', 155, 20.0, 26.8, 35, 58.7, 17.5],
  ['NEVER', '2024-07-01', 'NEW', 35, 2.9, 8.7, 2, 30.0, 7.4],
  ['NEVER', '2024-07-01', 'CHANGED', 30, 3.3, 7.5, 1, 12.5, 7.3],
  ['NEVER', '2024-07-01', 'UNCHANGED', 110, 29.1, 36.9, 36, 60.2, 25.6],
  ['NEVER', '2024-07-01', 'ALL', 175, 19.4, 26.2, 39, 57.4, 17.6],
  ['ALWAYS', '2024-01-01', 'NEW', 120, 41.7, 52.3, 81, 63.0, 30.1],
  ['ALWAYS', '2024-01-01', 'ALL', 120, 41.7, 52.3, 81, 63.0, 30.1],
  ['ALWAYS', '2024-04-01', 'NEW', 40, 45.0, 55.8, 28, 66.4, 31.1],
  ['ALWAYS', '2024-04-01', 'CHANGED', 25, 36.0, 47.1, 15, 60.9, 26.4],
  ['ALWAYS', '2024-04-01', 'UNCHANGED', 90, 43.3, 54.0, 63, 64.8, 28.8],
  ['ALWAYS', '2024-04-01', 'ALL', 155, 42.6, 53.4, 106, 64.6, 29.1],
  ['ALWAYS', '2024-07-01', 'NEW', 35, 42.9, 54.2, 24, 65.5, 29.5],
  ['ALWAYS', '2024-07-01', 'CHANGED', 30, 40.0, 50.6, 19, 63.1, 29.0],
  ['ALWAYS', '2024-07-01', 'UNCHANGED', 110, 44.5, 55.3, 78, 65.9, 29.5],
  ['ALWAYS', '2024-07-01', 'ALL', 175, 43.4, 54.3, 121, 65.3, 29.4],
  ['ADAPTIVE', '2024-01-01', 'NEW', 120, 40.0, 50.9, 76, 62.6, 30.7],
  ['ADAPTIVE', '2024-01-01', 'ALL', 120, 40.0, 50.9, 76, 62.6, 30.7],
  ['ADAPTIVE', '2024-04-01', 'NEW', 40, 42.5, 53.6, 27, 64.0, 32.0],
  ['ADAPTIVE', '2024-04-01', 'CHANGED', 25, 36.0, 46.2, 14, 61.3, 27.0],
  ['ADAPTIVE', '2024-04-01', 'UNCHANGED', 90, 46.7, 57.5, 66, 66.8, 31.9],
  ['ADAPTIVE', '2024-04-01', 'ALL', 155, 43.9, 54.7, 107, 65.4, 31.0],
  ['ADAPTIVE', '2024-07-01', 'NEW', 35, 42.9, 53.1, 23, 64.7, 30.9],
  ['ADAPTIVE', '2024-07-01', 'CHANGED', 30, 40.0, 49.8, 18, 62.4, 30.9],
  ['ADAPTIVE', '2024-07-01', 'UNCHANGED', 110, 47.3, 58.4, 81, 67.6, 32.7],
  ['ADAPTIVE', '2024-07-01', 'ALL', 175, 45.2, 55.9, 122, 66.5, 31.5],
];

/** What the rows leave out follows from the mode: NEVER retrieves nothing, only ADAPTIVE decides. */
function cell([mode, snapshot, type, items, em, f1, adopted, adoptedF1, notAdoptedF1]: Row): EvaluationCell {
  return {
    mode,
    snapshot,
    type,
    items,
    em,
    f1,
    match: Math.min(100, Math.round(f1 * 11) / 10),
    retrievalHit: mode === 'NEVER' ? 0 : mode === 'ALWAYS' ? 71.4 : 66.2,
    decisionAccuracy: mode === 'ADAPTIVE' ? 78.5 : null,
    adopted,
    adoptedF1,
    notAdoptedF1,
    bleu: type === 'CHANGED' ? null : Math.round(f1 * 3) / 10,
  };
}

/** Answers, mean p(reliable) and accuracy of the ten equal-width bins, as eval/answerEvaluation.ts bins them. */
function bins(counts: ReadonlyArray<[number, number, number]>): ModeReliability['bins'] {
  return counts.map(([answers, meanReliable, accuracy], b) => ({ from: b / 10, to: (b + 1) / 10, answers, meanReliable, accuracy }));
}

const RELIABILITY: ModeReliability[] = [
  {
    mode: 'NEVER',
    ece: 0.142,
    bins: bins([
      [96, 0.06, 0.02],
      [88, 0.15, 0.07],
      [64, 0.24, 0.14],
      [41, 0.35, 0.2],
      [26, 0.44, 0.27],
      [18, 0.55, 0.39],
      [9, 0.64, 0.56],
      [5, 0.74, 0.6],
      [3, 0.84, 0.67],
      [0, 0, 0],
    ]),
  },
  {
    mode: 'ALWAYS',
    ece: 0.061,
    bins: bins([
      [12, 0.07, 0.08],
      [19, 0.16, 0.11],
      [27, 0.25, 0.19],
      [31, 0.35, 0.29],
      [38, 0.45, 0.42],
      [46, 0.55, 0.5],
      [57, 0.65, 0.6],
      [74, 0.75, 0.69],
      [81, 0.85, 0.78],
      [65, 0.94, 0.88],
    ]),
  },
  {
    mode: 'ADAPTIVE',
    ece: 0.048,
    bins: bins([
      [0, 0, 0],
      [14, 0.17, 0.14],
      [25, 0.25, 0.24],
      [33, 0.35, 0.31],
      [37, 0.45, 0.43],
      [44, 0.55, 0.52],
      [59, 0.65, 0.61],
      [77, 0.75, 0.72],
      [85, 0.85, 0.8],
      [76, 0.95, 0.9],
    ]),
  },
];

/** snapshot → type → [QA items, dialogue items] */
const SIZES: Record<string, Partial<Record<'NEW' | 'CHANGED' | 'UNCHANGED', [number, number]>>> = {
  '2024-01-01': { NEW: [100, 20] },
  '2024-04-01': { NEW: [32, 8], CHANGED: [20, 5], UNCHANGED: [72, 18] },
  '2024-07-01': { NEW: [28, 7], CHANGED: [24, 6], UNCHANGED: [88, 22] },
};

export function overTimeFixture(): EvaluationOverTime {
  return {
    finishedAt: '2024-07-02T09:41:27.000Z',
    source: 'store',
    snapshots: [...SNAPSHOTS],
    modes: [...MODES],
    cells: ROWS.map(cell),
    sizes: Object.entries(SIZES).flatMap(([snapshot, types]) =>
      Object.entries(types).flatMap(([type, [qa, dialogue]]) => [
        { snapshot, kind: 'qa', type: type as 'NEW' | 'CHANGED' | 'UNCHANGED', count: qa },
        { snapshot, kind: 'dialogue', type: type as 'NEW' | 'CHANGED' | 'UNCHANGED', count: dialogue },
      ]),
    ),
    reliability: RELIABILITY,
  };
}
