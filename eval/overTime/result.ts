/**
 * What `chronoql eval` writes: answer quality per retrieval mode, per snapshot and per item
 * type (GrowOVER's Table 4), the benchmark's size per snapshot × kind × type (its Table 13),
 * and the certainty gate's reliability per mode. The report (charts, page, markdown) reads only this.
 */
import type { ReliabilityBin } from '../answerEvaluation.js';

export type CellType = 'NEW' | 'CHANGED' | 'UNCHANGED' | 'ALL';

/** One mode × snapshot × type cell; every score is a percentage (0–100, like eval-answers), null when nothing was measured. */
export interface EvaluationCell {
  mode: string;
  /** The snapshot's day, YYYY-MM-DD, or "file" for a QA file without dates. */
  snapshot: string;
  type: CellType;
  items: number;
  em: number;
  f1: number;
  /** Share of items whose gold answer appears in the prediction. */
  match: number;
  /** Share of items whose retrieved evidence holds one of their evidence sentences (null: no evidence known). */
  retrievalHit: number | null;
  /** Share of items whose retrieve / do-not-retrieve decision was right (null: the mode never decides). */
  decisionAccuracy: number | null;
  adopted: number;
  adoptedF1: number | null;
  notAdoptedF1: number | null;
  /** Corpus BLEU-4 of dialogue turns' answers against the expert's reply (null: no dialogue turns). */
  bleu: number | null;
}

export interface BenchmarkSize {
  snapshot: string;
  kind: string;
  type: 'NEW' | 'CHANGED' | 'UNCHANGED';
  count: number;
}

export interface ModeReliability {
  mode: string;
  ece: number;
  bins: ReliabilityBin[];
}

export interface EvaluationOverTime {
  /** ISO instant the run finished. */
  finishedAt: string;
  /** "store" (the benchmark as of each snapshot) or the QA file's path. */
  source: string;
  /** Snapshot days in order (columns of Table 4). */
  snapshots: string[];
  /** Modes in order (rows of Table 4). */
  modes: string[];
  cells: EvaluationCell[];
  sizes: BenchmarkSize[];
  reliability: ModeReliability[];
}
