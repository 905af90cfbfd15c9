/**
 * Training of the answering models, reproducible from the repository:
 * - the span scorer, on one half of a public QA set (gold paragraphs), `chronoql train-spans`;
 * - the certainty gate and ARR's λ, on QA items with types and evidence, `chronoql train-gate`.
 */
import { exactMatch, f1Score, matchAccuracy } from '../bench/answerMetrics.js';
import { normalizeAnswer } from '../text/normalize.js';
import { trainListwiseRanker, trainSoftmaxRegression, type CandidateGroup } from '../learning/softmaxRegression.js';
import type { ClassifierModelJson } from '../native/index.js';
import type { QaItem } from '../retrieval/evaluation.js';
import type { RetrievalService } from '../retrieval/retrievalService.js';
import type { AskService } from './askService.js';
import { CertaintyGate, DEFAULT_LAMBDA, GATE_CLASSES, GATE_FEATURES, predictedClass, type GateClass, type GateModelFile } from './certaintyGate.js';
import { analyseQuestion } from './question.js';
import { SPAN_CLASSES, SPAN_FEATURES, spanCandidates } from './spanScorer.js';
import { EvidenceKind, RetrievalMode } from './types.js';

/** The span scorer, ranking the candidate spans of each gold paragraph so that a span equal to a gold answer comes first. */
export function trainSpanScorer(items: readonly QaItem[]): { model: ClassifierModelJson; questions: number; candidates: number; loss: number } {
  const groups: CandidateGroup[] = items.flatMap((item) => {
    const text = item.documents[0]?.text;
    if (!text) return [];
    const candidates = spanCandidates(analyseQuestion(item.question), text);
    return [{ features: candidates.map((c) => c.features), correct: candidates.map((c) => exactMatch(c.text, item.answers) === 1) }];
  });
  const usable = groups.filter((group) => group.correct.some(Boolean));
  const { model, loss } = trainListwiseRanker(usable, { classes: SPAN_CLASSES, features: SPAN_FEATURES });
  return { model, questions: usable.length, candidates: usable.reduce((n, group) => n + group.features.length, 0), loss };
}

/**
 * GrowOVER's labels, for every (question, document, candidate) of the first round: reliable
 * when the candidate holds a whole gold answer (a part of a name is not reliable); misleading when it is an answer that no longer holds
 * (a CHANGED item's previous answer) or the item is CHANGED and the document lacks the current
 * answer; uncertain otherwise (the evidence was missed, or the answer is wrong).
 */
export function gateLabel(item: QaItem, answer: string, documentText: string): GateClass {
  if (answer !== '' && matchAccuracy(answer, item.answers) === 1) return 'reliable';
  const stale = item.previousAnswers.length > 0 && answer !== '' && f1Score(answer, item.previousAnswers) >= 0.5;
  const holdsAnswer = item.answers.some((a) => normalizeAnswer(documentText).includes(normalizeAnswer(a)));
  if (stale || (item.type === 'CHANGED' && !holdsAnswer)) return 'misleading';
  return 'uncertain';
}

export interface GateTrainingReport {
  model: GateModelFile;
  trainItems: number;
  heldOutItems: number;
  rows: Record<GateClass, number>;
  heldOutAccuracy: number;
  /** Re-retrieval hit rate on held-out items the gate did not trust, per λ tried. */
  lambdaSearch: Array<{ lambda: number; hitRate: number; questions: number }>;
}

// GrowOVER used 2.0; p(reliable) of an untrusted answer is often small, so larger λ are tried too.
const LAMBDAS = [0, 0.5, 1, 2, 4, 8, 16, 32, 64];

/** Alternating subjects: the 1st, 3rd, … subject's items train, the others are held out. */
export function splitBySubject(items: readonly QaItem[]): { train: QaItem[]; heldOut: QaItem[] } {
  const order = new Map<string, number>();
  for (const item of items) if (!order.has(item.context[0] ?? '')) order.set(item.context[0] ?? '', order.size);
  return {
    train: items.filter((item) => order.get(item.context[0] ?? '')! % 2 === 0),
    heldOut: items.filter((item) => order.get(item.context[0] ?? '')! % 2 === 1),
  };
}

export async function trainGate(ask: AskService, retrieval: RetrievalService, items: readonly QaItem[], onProgress?: (done: number, total: number) => void): Promise<GateTrainingReport> {
  const { train, heldOut } = splitBySubject(items);
  type Row = { item: QaItem; features: number[]; label: number; answer: string; isFact: boolean };
  let done = 0;
  const collect = async (part: readonly QaItem[]): Promise<Row[]> => {
    const out: Row[] = [];
    for (let start = 0; start < part.length; start += 64) {
      const batch = part.slice(start, start + 64);
      const rounds = await ask.firstRoundCandidates(
        batch.map((item) => ({ question: item.question, asOf: item.asOf, retrieval: RetrievalMode.GATED })),
        new Date(),
      );
      rounds.forEach(({ candidates }, i) => {
        for (const candidate of candidates) {
          const label = GATE_CLASSES.indexOf(gateLabel(batch[i]!, candidate.answer, candidate.evidence.text));
          out.push({ item: batch[i]!, features: candidate.features, answer: candidate.answer, label, isFact: candidate.evidence.kind === EvidenceKind.FACT });
        }
      });
      done += batch.length;
      onProgress?.(done, items.length);
    }
    return out;
  };
  const trainRows = await collect(train);
  const heldOutRows = await collect(heldOut);
  const { model: classifier } = trainSoftmaxRegression(
    trainRows.map((row) => ({ features: row.features, label: row.label })),
    { classes: GATE_CLASSES, features: GATE_FEATURES, balanceClasses: true, iterations: 500 },
  );
  const gate = CertaintyGate.fromModel({ classifier, lambda: DEFAULT_LAMBDA });
  const certainties = await gate.score(heldOutRows.map((row) => row.features));
  const predicted = certainties.map((c) => GATE_CLASSES.indexOf(predictedClass(c)));
  const heldOutAccuracy = heldOutRows.length === 0 ? 0 : predicted.filter((p, i) => p === heldOutRows[i]!.label).length / heldOutRows.length;

  // λ: re-retrieve the held-out questions whose best passage the gate does not trust, with each λ.
  // Passages only: with the graph's fact among the candidates the gate trusts nearly every question.
  const best = new Map<QaItem, { reliable: number; answer: string; predicted: number }>();
  heldOutRows.forEach((row, i) => {
    if (row.isFact) return;
    const current = best.get(row.item);
    if (!current || certainties[i]!.reliable > current.reliable) best.set(row.item, { reliable: certainties[i]!.reliable, answer: row.answer, predicted: predicted[i]! });
  });
  const untrusted = [...best.entries()].filter(([, b]) => b.predicted !== 0);
  const firstRound = await ask.firstRoundCandidates(untrusted.map(([item]) => ({ question: item.question, asOf: item.asOf, retrieval: RetrievalMode.GATED })), new Date());
  const lambdaSearch: GateTrainingReport['lambdaSearch'] = [];
  for (const lambda of LAMBDAS) {
    let hits = 0;
    for (let q = 0; q < untrusted.length; q++) {
      const [item, b] = untrusted[q]!;
      const exclude = firstRound[q]!.candidates.flatMap((c) => (c.evidence.rowId === null ? [] : [c.evidence.rowId]));
      const [found] = await retrieval.reRetrieve([{ question: item.question, answer: b.answer, omega: lambda * b.reliable, excludeRowIds: exclude }], item.asOf ?? new Date(), 3);
      if (found!.some((hit) => item.answers.some((a) => normalizeAnswer(hit.text).includes(normalizeAnswer(a))))) hits++;
    }
    lambdaSearch.push({ lambda, hitRate: untrusted.length === 0 ? 0 : hits / untrusted.length, questions: untrusted.length });
  }
  // The best hit rate; on a tie the λ closest to GrowOVER's.
  const chosen = [...lambdaSearch].sort((a, b) => b.hitRate - a.hitRate || Math.abs(a.lambda - DEFAULT_LAMBDA) - Math.abs(b.lambda - DEFAULT_LAMBDA))[0];
  const count = (label: number): number => trainRows.filter((row) => row.label === label).length;
  return {
    model: { classifier, lambda: chosen?.lambda ?? DEFAULT_LAMBDA },
    trainItems: train.length,
    heldOutItems: heldOut.length,
    rows: { reliable: count(0), misleading: count(1), uncertain: count(2) },
    heldOutAccuracy,
    lambdaSearch,
  };
}
