/**
 * TimeQA (Chen, Wang and Wang, NeurIPS 2021), as issue 31 measures it: every page of one half of
 * the file is ingested as one snapshot dated after the times its questions ask about, and each
 * question is asked with the default `ask`. Reported: how often a passage holding the answer is
 * among the evidence, exact match and F1 of the best guess, and how far adopted answers can be
 * trusted (unanswerable questions, whose `answers` are empty, must not get one).
 *
 * The halves are by page, fixed by the title's SHA-1: first hex digit 0–7 is the half to tune
 * on, 8–f the half to report on. The same rule splits the hand-checked event-time sentences.
 */
import { createHash } from 'node:crypto';
import type { AskService } from '../src/qa/askService.js';
import type { AnswerResult } from '../src/qa/types.js';
import { holdsWords, normalizeAnswer, spacedWords } from '../src/text/normalize.js';
import { modeReport, type ModeReport } from './answerEvaluation.js';
import type { EvaluationSnapshot } from './evaluationStore.js';
import type { QaItem } from './qaFile.js';

export type TimeQaPart = 'tune' | 'report' | 'all';

/** After every time TimeQA's questions ask about (its pages were taken in 2021). */
const SNAPSHOT_DATE = new Date('2022-01-01T00:00:00.000Z');
const BATCH = 64;

const pageOf = (item: QaItem): string => item.documents[0]?.title ?? item.context[0] ?? '';

export function timeQaHalf(title: string): 'tune' | 'report' {
  return Number.parseInt(createHash('sha1').update(title).digest('hex')[0]!, 16) < 8 ? 'tune' : 'report';
}

export function timeQaPart(items: readonly QaItem[], part: TimeQaPart): QaItem[] {
  return part === 'all' ? [...items] : items.filter((item) => timeQaHalf(pageOf(item)) === part);
}

/** The questions' pages as one snapshot, an article per page named by its title. */
export function timeQaSnapshot(items: readonly QaItem[]): EvaluationSnapshot {
  const pages = new Map(items.map((item) => [pageOf(item), item.documents[0]?.text ?? '']));
  return { takenAt: SNAPSHOT_DATE, source: 'eval:timeqa', articles: [...pages].map(([title, text]) => ({ id: title, title, text, infobox: {} })) };
}

/**
 * Answerable questions with the paragraph of their page that answers them as the only document,
 * for training the reader: of the paragraphs holding a gold answer, the one sharing most of the
 * question's numbers (its years) with it, the first on a tie. A page holds an office's holders
 * one after another, so the paragraph that names the asked years is the one a reader must read.
 */
export function timeQaParagraphItems(items: readonly QaItem[]): QaItem[] {
  return items.flatMap((item) => {
    const gold = item.answers.map(normalizeAnswer).filter(Boolean);
    const page = item.documents[0];
    if (gold.length === 0 || !page) return [];
    const numbers = item.question.match(/\d+/g) ?? [];
    let best: { text: string; shared: number } | null = null;
    for (const text of page.text.split(/\n\s*\n/)) {
      const normal = spacedWords(text);
      if (!gold.some((answer) => holdsWords(normal, answer))) continue;
      const shared = numbers.filter((number) => new RegExp(`\\b${number}\\b`).test(text)).length;
      if (best === null || shared > best.shared) best = { text, shared };
    }
    return best ? [{ ...item, documents: [{ id: `${page.id}#${item.question}`, title: page.title, text: best.text }] }] : [];
  });
}

/** Whether a passage or sentence the answer drew on holds a gold answer. */
function evidenceHolds(item: QaItem, result: AnswerResult): boolean {
  const gold = item.answers.map(normalizeAnswer).filter(Boolean);
  const texts = [...result.rounds.flatMap((round) => round.hits), ...result.candidates.map((candidate) => candidate.evidence)].map((evidence) =>
    spacedWords(evidence.text),
  );
  return gold.some((answer) => texts.some((text) => holdsWords(text, answer)));
}

export interface TimeQaReport {
  part: TimeQaPart;
  questions: number;
  answerable: number;
  /** Answerable questions with a passage holding the answer among the evidence. */
  evidenceHoldsAnswer: number;
  answers: ModeReport;
}

export async function evaluateTimeQa(
  ask: AskService,
  items: readonly QaItem[],
  part: TimeQaPart,
  onProgress?: (done: number, total: number) => void,
): Promise<TimeQaReport> {
  const results: AnswerResult[] = [];
  for (let start = 0; start < items.length; start += BATCH) {
    results.push(
      ...(await ask.batchAsk(
        items.slice(start, start + BATCH).map((item) => ({ question: item.question })),
        new Date(),
      )),
    );
    onProgress?.(Math.min(start + BATCH, items.length), items.length);
  }
  const answerable = items.flatMap((item, i) => (item.answers.length > 0 ? [i] : []));
  return {
    part,
    questions: items.length,
    answerable: answerable.length,
    evidenceHoldsAnswer: answerable.filter((i) => evidenceHolds(items[i]!, results[i]!)).length,
    answers: modeReport(items, results),
  };
}

export function timeQaSummary(report: TimeQaReport): string {
  const percent = (part: number, whole: number): string => (whole === 0 ? '–' : `${((100 * part) / whole).toFixed(1)} %`);
  const { overall, trust } = report.answers;
  return [
    `${report.questions} TimeQA questions (${report.part} half), ${report.answerable} answerable`,
    `evidence holds the answer: ${percent(report.evidenceHoldsAnswer, report.answerable)}`,
    `best guess: EM ${overall.exactMatch}, F1 ${overall.f1}`,
    `adopted: ${trust.adopted} (${percent(trust.adopted, report.questions)} of questions), precision ${trust.precision.toFixed(3)}`,
    `unanswerable adopted: ${trust.unanswerableAdopted} of ${trust.unanswerable} (${percent(trust.unanswerableAdopted, trust.unanswerable)})`,
  ].join('\n');
}
