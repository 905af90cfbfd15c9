/**
 * `chronoql eval`: answer quality over time. Every question of the benchmark as of each
 * snapshot (or of a QA file, grouped by its dates) is asked through batchAsk in each mode, and
 * scored per mode × snapshot × type (GrowOVER's Table 4): EM, token F1, match, the share whose
 * retrieved documents hold their evidence, the retrieval decision's accuracy, F1 of adopted and
 * not adopted answers, and BLEU for dialogue turns.
 */
import type { AskService } from '../../src/qa/askService.js';
import { scoreAnswers } from '../../src/qa/answerMetrics.js';
import { normalizeAnswer } from '../../src/text/normalize.js';
import { DecisionAction, RetrievalMode, type AnswerResult, type AskRequest, type Turn } from '../../src/qa/types.js';
import { reliability } from '../answerEvaluation.js';
import { isCorrect } from '../gateTraining.js';
import type { QaItem } from '../qaFile.js';
import { corpusBleu } from './bleu.js';
import type { BenchmarkSize, CellType, EvaluationCell, EvaluationOverTime } from './result.js';
import { TYPES } from './table.js';

/** A question with the snapshot (column) it is asked at. */
export type TimedItem = QaItem & { snapshot: string };

const BATCH = 64;

/** Each item's conversation: a dialogue turn is asked after the turns before it, each with the expert's reply. */
function conversationsOf(items: readonly TimedItem[]): Turn[][] {
  const turnsOf = new Map<string, TimedItem[]>();
  for (const item of items) {
    if (!item.dialogue) continue;
    const key = `${item.snapshot}\u0000${item.dialogue.id}`;
    const turns = turnsOf.get(key);
    if (turns) turns.push(item);
    else turnsOf.set(key, [item]);
  }
  return items.map((item) => {
    if (!item.dialogue) return [];
    const { turn } = item.dialogue;
    return turnsOf
      .get(`${item.snapshot}\u0000${item.dialogue.id}`)!
      .filter((other) => other.dialogue!.turn < turn)
      .sort((a, b) => a.dialogue!.turn - b.dialogue!.turn)
      .map((other) => ({ question: other.question, answer: other.answers[0] ?? null }));
  });
}

/** Whether the documents retrieved for a question hold (or are part of) one of its evidence texts. */
export function retrievedEvidence(result: AnswerResult, evidence: readonly string[]): boolean {
  const wanted = evidence.map(normalizeAnswer).filter(Boolean);
  const found = [...result.rounds.flatMap((round) => round.hits), ...result.candidates.map((candidate) => candidate.evidence)].map((hit) =>
    normalizeAnswer(hit.text),
  );
  return found.some((text) => text !== '' && wanted.some((want) => text.includes(want) || want.includes(text)));
}

const percent = (part: number, whole: number): number | null => (whole === 0 ? null : Number(((100 * part) / whole).toFixed(2)));

/** One cell of the table: the items of one mode × snapshot × type, with their results (and closed-book results, when known). */
export function scoreCell(
  key: { mode: string; snapshot: string; type: CellType },
  rows: ReadonlyArray<{ item: QaItem; result: AnswerResult; closedBook: AnswerResult | null }>,
): EvaluationCell {
  const pairs = rows.map(({ item, result }) => ({ prediction: result.guess ?? '', answers: item.answers }));
  const scores = scoreAnswers(pairs);
  const withEvidence = rows.filter(({ item }) => (item.evidence ?? []).length > 0);
  const decided = rows.filter(({ closedBook }) => closedBook !== null);
  const rightDecisions = decided.filter(({ item, result, closedBook }) => {
    const needed = !isCorrect(closedBook!.guess, item.answers);
    return needed === (result.decision.action !== DecisionAction.NO_RETRIEVE);
  });
  const adopted = rows.filter(({ result }) => result.adopted);
  const notAdopted = rows.filter(({ result }) => !result.adopted);
  const f1Of = (subset: typeof rows): number | null =>
    subset.length === 0 ? null : scoreAnswers(subset.map(({ item, result }) => ({ prediction: result.guess ?? '', answers: item.answers }))).f1;
  const turns = rows.filter(({ item }) => item.kind === 'DIALOGUE_TURN');
  return {
    ...key,
    items: rows.length,
    em: scores.exactMatch,
    f1: scores.f1,
    match: scores.match,
    retrievalHit: percent(withEvidence.filter(({ item, result }) => retrievedEvidence(result, item.evidence!)).length, withEvidence.length),
    decisionAccuracy: percent(rightDecisions.length, decided.length),
    adopted: adopted.length,
    adoptedF1: f1Of(adopted),
    notAdoptedF1: f1Of(notAdopted),
    bleu:
      turns.length === 0
        ? null
        : Number(corpusBleu(turns.map(({ item, result }) => ({ hypothesis: result.guess ?? '', reference: item.answers[0] ?? '' }))).toFixed(2)),
  };
}

/** What one question is sized as when it comes from a file: its kind, or IMPORTED. */
export function sizesOf(items: readonly TimedItem[]): BenchmarkSize[] {
  const counts = new Map<string, BenchmarkSize>();
  for (const item of items) {
    const type = (['NEW', 'CHANGED', 'UNCHANGED'] as const).find((known) => known === item.type) ?? 'UNCHANGED';
    const kind = item.kind ?? 'IMPORTED';
    const key = `${item.snapshot}\u0000${kind}\u0000${type}`;
    const size = counts.get(key) ?? { snapshot: item.snapshot, kind, type, count: 0 };
    size.count += 1;
    counts.set(key, size);
  }
  return [...counts.values()];
}

export async function evaluateOverTime(
  ask: AskService,
  items: readonly TimedItem[],
  options: {
    modes: readonly RetrievalMode[];
    snapshots: readonly string[];
    sizes: BenchmarkSize[];
    source: string;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<EvaluationOverTime> {
  const total = Math.ceil(items.length / BATCH) * options.modes.length;
  let done = 0;
  // The same requests in every mode but for the mode itself.
  const conversations = conversationsOf(items);
  const requestOf = (i: number, mode: RetrievalMode): AskRequest => ({
    question: items[i]!.question,
    asOf: items[i]!.asOf,
    retrieval: mode,
    ...(conversations[i]!.length > 0 ? { conversation: conversations[i] } : {}),
  });
  const answers = new Map<RetrievalMode, AnswerResult[]>();
  for (const mode of options.modes) {
    const results: AnswerResult[] = [];
    for (let start = 0; start < items.length; start += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, items.length - start) }, (_, offset) => requestOf(start + offset, mode));
      results.push(...(await ask.batchAsk(batch, new Date(), 'eval')));
      options.onProgress?.(++done, total);
    }
    answers.set(mode, results);
  }
  // The decision is right when it retrieves exactly for the questions the generator alone gets wrong.
  const closedBook = answers.get(RetrievalMode.NEVER) ?? null;
  const cells: EvaluationCell[] = [];
  for (const mode of options.modes) {
    const results = answers.get(mode)!;
    const decides = mode === RetrievalMode.ADAPTIVE && closedBook !== null;
    const rows = items.map((item, i) => ({ item, result: results[i]!, closedBook: decides ? closedBook[i]! : null }));
    for (const snapshot of options.snapshots) {
      for (const type of TYPES) {
        const inCell = rows.filter(({ item }) => item.snapshot === snapshot && (type === 'ALL' || item.type === type));
        if (inCell.length > 0) cells.push(scoreCell({ mode, snapshot, type }, inCell));
      }
    }
  }
  return {
    finishedAt: new Date().toISOString(),
    source: options.source,
    snapshots: [...options.snapshots],
    modes: [...options.modes],
    cells,
    sizes: options.sizes,
    reliability: options.modes.map((mode) => {
      const results = answers.get(mode)!;
      const pairs = results.flatMap((result, i) =>
        result.certainty ? [{ p: result.certainty.reliable, right: isCorrect(result.guess, items[i]!.answers) }] : [],
      );
      return { mode, ...reliability(pairs) };
    }),
  };
}
