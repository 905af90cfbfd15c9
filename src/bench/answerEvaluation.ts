/**
 * Answer quality of the `ask` pipeline: EM / F1 / match per retrieval mode and question type,
 * the gap between adopted and not-adopted answers, and the accuracy of the retrieval decision
 * (retrieval is needed when the generator alone, at its knowledge cutoff, answers wrongly).
 */
import { documentEvidence, type AskService } from '../qa/askService.js';
import { ExtractiveGenerator } from '../qa/generators/extractive.js';
import { analyseQuestion } from '../qa/question.js';
import { DecisionAction, EvidenceKind, RetrievalMode, type AnswerResult } from '../qa/types.js';
import type { QaItem } from '../retrieval/evaluation.js';
import { f1Score, matchAccuracy, scoreAnswers, type AnswerScores } from './answerMetrics.js';

const BATCH = 64;

export interface ModeReport {
  overall: AnswerScores;
  byType: Record<string, AnswerScores>;
  adopted: AnswerScores;
  notAdopted: AnswerScores;
}

async function answerAll(ask: AskService, items: readonly QaItem[], mode: RetrievalMode, onProgress?: () => void): Promise<AnswerResult[]> {
  const results: AnswerResult[] = [];
  for (let start = 0; start < items.length; start += BATCH) {
    const batch = items.slice(start, start + BATCH);
    results.push(...(await ask.batchAsk(batch.map((item) => ({ question: item.question, asOf: item.asOf, retrieval: mode })), new Date())));
    onProgress?.();
  }
  return results;
}

function report(items: readonly QaItem[], results: readonly AnswerResult[]): ModeReport {
  const pairs = results.map((result, i) => ({ prediction: result.text, answers: items[i]!.answers, type: items[i]!.type ?? 'ALL', adopted: result.adopted }));
  const types = [...new Set(pairs.map((pair) => pair.type))].sort();
  return {
    overall: scoreAnswers(pairs),
    byType: Object.fromEntries(types.map((type) => [type, scoreAnswers(pairs.filter((pair) => pair.type === type))])),
    adopted: scoreAnswers(pairs.filter((pair) => pair.adopted)),
    notAdopted: scoreAnswers(pairs.filter((pair) => !pair.adopted)),
  };
}

export interface AskEvaluation {
  items: number;
  modes: Record<string, ModeReport>;
  decision?: { accuracy: number; retrieveShare: number; needShare: number };
}

/** Every item answered in each mode; with NEVER and ADAPTIVE among them, the decision's accuracy too. */
export async function evaluateAsk(ask: AskService, items: readonly QaItem[], modes: readonly RetrievalMode[], onProgress?: (done: number, total: number) => void): Promise<AskEvaluation> {
  const total = Math.ceil(items.length / BATCH) * modes.length;
  let done = 0;
  const tick = (): void => onProgress?.(++done, total);
  const answers = new Map<RetrievalMode, AnswerResult[]>();
  for (const mode of modes) answers.set(mode, await answerAll(ask, items, mode, tick));
  const evaluation: AskEvaluation = { items: items.length, modes: Object.fromEntries([...answers].map(([mode, results]) => [mode, report(items, results)])) };
  const closedBook = answers.get(RetrievalMode.NEVER);
  const adaptive = answers.get(RetrievalMode.ADAPTIVE);
  if (closedBook && adaptive) {
    const needs = closedBook.map((result, i) => matchAccuracy(result.text, items[i]!.answers) === 0 && f1Score(result.text, items[i]!.answers) < 0.5);
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
export async function evaluateGoldParagraph(items: readonly QaItem[]): Promise<AnswerScores> {
  const generator = new ExtractiveGenerator();
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
