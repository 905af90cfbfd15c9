/**
 * Answer quality of the `ask` pipeline: EM / F1 / match per retrieval mode and question type,
 * the gap between adopted and not-adopted answers, and the accuracy of the retrieval decision
 * (retrieval is needed when the generator alone, at its knowledge cutoff, answers wrongly).
 */
import { documentEvidence, type AskService } from '../src/qa/askService.js';
import { ExtractiveGenerator } from '../src/qa/generators/extractive.js';
import { analyseQuestion } from '../src/qa/question.js';
import type { SpanReader } from '../src/qa/reader/spanReader.js';
import { DecisionAction, EvidenceKind, RetrievalMode, type AnswerResult } from '../src/qa/types.js';
import type { QaItem } from './qaFile.js';
import { f1Score, matchAccuracy, scoreAnswers, type AnswerScores } from '../src/qa/answerMetrics.js';
import { isCorrect } from './gateTraining.js';

const BATCH = 64;

/** A comma-separated `--modes` list as retrieval modes; an unknown name is an error naming the known ones. */
export function parseRetrievalModes(list: string): RetrievalMode[] {
  return list.split(',').map((mode) => {
    const known = RetrievalMode[mode.trim() as keyof typeof RetrievalMode];
    if (!known) throw new RangeError(`--modes: unknown mode "${mode}" (known: ${Object.keys(RetrievalMode).join(', ')})`);
    return known;
  });
}

export interface ReliabilityBin {
  /** p(reliable) from `from` up to (not including) `to`; the last bin includes 1. */
  from: number;
  to: number;
  answers: number;
  meanReliable: number;
  /** Share of its answers that are right (token F1 ≥ 0.5 with a gold answer). */
  accuracy: number;
}

/** How far adopted answers can be trusted, and how well p(reliable) is calibrated. */
export interface TrustReport {
  answerable: number;
  unanswerable: number;
  /** Answerable questions whose best guess is right. */
  guessRight: number;
  adopted: number;
  adoptedRight: number;
  /** adoptedRight / adopted. */
  precision: number;
  /** Unanswerable questions (no gold answer) that got an adopted answer. */
  unanswerableAdopted: number;
  /** Right answers adopted on answerable questions plus abstentions on unanswerable ones, over all questions. */
  right: number;
  /** Expected calibration error of the chosen answers' p(reliable), 10 equal-width bins. */
  ece: number;
  bins: ReliabilityBin[];
}

export interface ModeReport {
  overall: AnswerScores;
  byType: Record<string, AnswerScores>;
  adopted: AnswerScores;
  notAdopted: AnswerScores;
  trust: TrustReport;
  /** Every question with its best guess, for reading what went wrong. */
  answers: Array<{ question: string; asOf: string | null; gold: readonly string[]; guess: string | null; adopted: boolean; reliable: number | null }>;
}

/** A reliability diagram (10 equal-width bins) and its expected calibration error. */
export function reliability(pairs: ReadonlyArray<{ p: number; right: boolean }>): { ece: number; bins: ReliabilityBin[] } {
  const bins = Array.from({ length: 10 }, (_, b) => {
    const inBin = pairs.filter(({ p }) => (b === 9 ? p >= b / 10 : p >= b / 10 && p < (b + 1) / 10));
    const mean = (values: number[]): number => (values.length === 0 ? 0 : values.reduce((a, c) => a + c, 0) / values.length);
    return {
      from: b / 10,
      to: (b + 1) / 10,
      answers: inBin.length,
      meanReliable: mean(inBin.map(({ p }) => p)),
      accuracy: mean(inBin.map(({ right }) => (right ? 1 : 0))),
    };
  });
  const ece = pairs.length === 0 ? 0 : bins.reduce((sum, bin) => sum + (bin.answers / pairs.length) * Math.abs(bin.accuracy - bin.meanReliable), 0);
  return { ece, bins };
}

function trust(items: readonly QaItem[], results: readonly AnswerResult[]): TrustReport {
  const rows = results.map((result, i) => ({ result, answerable: items[i]!.answers.length > 0, right: isCorrect(result.guess, items[i]!.answers) }));
  const adopted = rows.filter((row) => row.result.adopted);
  const answerable = rows.filter((row) => row.answerable);
  const calibrated = rows.flatMap((row) => (row.result.certainty ? [{ p: row.result.certainty.reliable, right: row.right }] : []));
  return {
    answerable: answerable.length,
    unanswerable: rows.length - answerable.length,
    guessRight: answerable.filter((row) => row.right).length,
    adopted: adopted.length,
    adoptedRight: adopted.filter((row) => row.right).length,
    precision: adopted.length === 0 ? 0 : adopted.filter((row) => row.right).length / adopted.length,
    unanswerableAdopted: adopted.filter((row) => !row.answerable).length,
    right: rows.length === 0 ? 0 : rows.filter((row) => (row.answerable ? row.result.adopted && row.right : !row.result.adopted)).length / rows.length,
    ...reliability(calibrated),
  };
}

async function answerAll(ask: AskService, items: readonly QaItem[], mode: RetrievalMode, onProgress?: () => void): Promise<AnswerResult[]> {
  const results: AnswerResult[] = [];
  for (let start = 0; start < items.length; start += BATCH) {
    const batch = items.slice(start, start + BATCH);
    results.push(
      ...(await ask.batchAsk(
        batch.map((item) => ({ question: item.question, asOf: item.asOf, retrieval: mode })),
        new Date(),
      )),
    );
    onProgress?.();
  }
  return results;
}

function report(items: readonly QaItem[], results: readonly AnswerResult[]): ModeReport {
  const pairs = results.map((result, i) => ({
    prediction: result.guess ?? '',
    answers: items[i]!.answers,
    type: items[i]!.type ?? 'ALL',
    adopted: result.adopted,
  }));
  const types = [...new Set(pairs.map((pair) => pair.type))].sort();
  return {
    overall: scoreAnswers(pairs),
    byType: Object.fromEntries(types.map((type) => [type, scoreAnswers(pairs.filter((pair) => pair.type === type))])),
    adopted: scoreAnswers(pairs.filter((pair) => pair.adopted)),
    notAdopted: scoreAnswers(pairs.filter((pair) => !pair.adopted)),
    trust: trust(items, results),
    answers: results.map((result, i) => ({
      question: items[i]!.question,
      asOf: items[i]!.asOf?.toISOString() ?? null,
      gold: items[i]!.answers,
      guess: result.guess,
      adopted: result.adopted,
      reliable: result.certainty?.reliable ?? null,
    })),
  };
}

export interface AskEvaluation {
  items: number;
  modes: Record<string, ModeReport>;
  decision?: { accuracy: number; retrieveShare: number; needShare: number };
}

/** Every item answered in each mode; with NEVER and ADAPTIVE among them, the decision's accuracy too. */
export async function evaluateAsk(
  ask: AskService,
  items: readonly QaItem[],
  modes: readonly RetrievalMode[],
  onProgress?: (done: number, total: number) => void,
): Promise<AskEvaluation> {
  const total = Math.ceil(items.length / BATCH) * modes.length;
  let done = 0;
  const tick = (): void => onProgress?.(++done, total);
  const answers = new Map<RetrievalMode, AnswerResult[]>();
  for (const mode of modes) answers.set(mode, await answerAll(ask, items, mode, tick));
  const evaluation: AskEvaluation = { items: items.length, modes: Object.fromEntries([...answers].map(([mode, results]) => [mode, report(items, results)])) };
  const closedBook = answers.get(RetrievalMode.NEVER);
  const adaptive = answers.get(RetrievalMode.ADAPTIVE);
  if (closedBook && adaptive) {
    const needs = closedBook.map(
      (result, i) => matchAccuracy(result.guess ?? '', items[i]!.answers) === 0 && f1Score(result.guess ?? '', items[i]!.answers) < 0.5,
    );
    const retrieves = adaptive.map((result) => result.decision.action !== DecisionAction.NO_RETRIEVE);
    evaluation.decision = {
      accuracy: needs.filter((need, i) => need === retrieves[i]).length / items.length,
      retrieveShare: retrieves.filter(Boolean).length / items.length,
      needShare: needs.filter(Boolean).length / items.length,
    };
  }
  return evaluation;
}

/** The extractive generator on each item's own (gold) paragraph: reading comprehension without retrieval. */
export async function evaluateGoldParagraph(reader: SpanReader, items: readonly QaItem[]): Promise<AnswerScores> {
  const generator = new ExtractiveGenerator(reader);
  const generations = await generator.generate(
    items.map((item) => ({
      question: analyseQuestion(item.question),
      evidence: documentEvidence({
        kind: EvidenceKind.PASSAGE,
        id: item.documents[0]?.id ?? '',
        articleId: item.documents[0]?.title ?? '',
        text: item.documents[0]?.text ?? '',
        validFrom: new Date(0),
        validTo: null,
        rank: 1,
      }),
    })),
  );
  return scoreAnswers(generations.map((generation, i) => ({ prediction: generation.answer, answers: items[i]!.answers })));
}

/** One row per mode: EM / F1 / match, how many answers were adopted and how many of them were right, and calibration. */
export function answerTable(evaluation: AskEvaluation): string {
  const percent = (part: number, whole: number): string => (whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)} %`);
  return [
    '| mode | EM | F1 | match | adopted | adopted right | unanswerable adopted | right or abstained | ECE |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...Object.entries(evaluation.modes).map(([mode, report]) => {
      const t = report.trust;
      return `| ${mode} | ${report.overall.exactMatch} | ${report.overall.f1} | ${report.overall.match} | ${t.adopted} of ${t.answerable + t.unanswerable} | ${percent(t.adoptedRight, t.adopted)} | ${t.unanswerable === 0 ? '–' : `${t.unanswerableAdopted} of ${t.unanswerable}`} | ${(100 * t.right).toFixed(1)} % | ${t.ece.toFixed(3)} |`;
    }),
  ].join('\n');
}
