import { createHash } from 'node:crypto';
import { parseDateInput } from '../src/domain/time.js';
import { InvalidInputError, type InputProblem } from '../src/ingest/errors.js';
import { readJsonLines } from '../src/ingest/jsonLines.js';
import { SearchMode, SearchUnit, type SearchHit } from '../src/retrieval/retriever.js';
import { type RetrievalService } from '../src/retrieval/retrievalService.js';

/** A question with gold answers (README.md, "QA files"). */
export interface QaItem {
  question: string;
  answers: string[];
  /** Article ids (or titles) the answer must come from; empty means any article. */
  context: string[];
  /**
   * The context passages that came with the item, for evaluating a QA set on its own contexts:
   * each distinct text is one document, with an id of its own (a title has many paragraphs).
   */
  documents: Array<{ id: string; title: string; text: string }>;
  asOf: Date | null;
  type: string | null;
  /** For a CHANGED item, the answers that held before (optional `previousAnswers`). */
  previousAnswers: string[];
  /** The texts the answer rests on (a living-benchmark export's `evidence`), for the retrieval hit rate. */
  evidence?: string[];
  /** A living-benchmark item's kind (TEXT_QA, FACT_QA, DIALOGUE_TURN, IMPORTED). */
  kind?: string;
  /** A dialogue turn's dialogue and position: the turns before it are its conversation. */
  dialogue?: { id: string; turn: number };
}

export class InvalidQaFileError extends InvalidInputError {
  readonly code = 'INVALID_QA_FILE';

  constructor(problems: InputProblem[]) {
    super('QA file rejected', problems);
  }
}

/** A context entry is an article id, or a {title, text} document (its title is the id). */
function contextEntry(entry: unknown): { id: string; text: string | null } | null {
  if (typeof entry === 'string') return { id: entry, text: null };
  const record = entry as { title?: unknown; text?: unknown } | null;
  if (record && typeof record === 'object' && typeof record.title === 'string') {
    return { id: record.title, text: typeof record.text === 'string' ? record.text : null };
  }
  return null;
}

/** A context text's stable document id: its title (when it has one) and a digest of the text. */
export function documentId(text: string, title?: string): string {
  const digest = createHash('sha256').update(text).digest('hex').slice(0, 12);
  return title ? `${title} ¶${digest}` : `context-${digest}`;
}

/** Reads a QA file: `question`, gold `answers` (or `ground_truth`; empty when there is none), optional `context`, `asOf`, `type` (or `kind`). */
export async function readQaFile(path: string): Promise<QaItem[]> {
  const { source, parsed, problems } = await readJsonLines(path);
  const items: QaItem[] = [];
  for (const { value, line } of parsed) {
    const report = (message: string): void => {
      problems.push({ source, line, message });
    };
    const record = (value ?? {}) as Record<string, unknown>;
    const answers = record.answers ?? record.ground_truth;
    if (typeof record.question !== 'string' || record.question.trim() === '') report('"question" must be a non-empty string');
    // An empty list is a question the store cannot answer: an answerer should abstain on it.
    if (!Array.isArray(answers) || !answers.every((a) => typeof a === 'string')) {
      report('"answers" (or "ground_truth") must be a list of strings (empty for a question without an answer)');
    }
    const context = Array.isArray(record.context) ? record.context.map(contextEntry) : [];
    if (record.context !== undefined && (!Array.isArray(record.context) || context.includes(null))) {
      report('"context" must be a list of strings or {title, text} objects');
    }
    let asOf: Date | null = null;
    if (record.asOf !== undefined && record.asOf !== null) {
      try {
        asOf = parseDateInput(String(record.asOf), '"asOf"');
      } catch (error) {
        report((error as Error).message);
      }
    }
    if (problems.some((problem) => problem.line === line)) continue;
    const entries = context as Array<{ id: string; text: string | null }>;
    items.push({
      question: (record.question as string).trim(),
      answers: answers as string[],
      context: entries.map((entry) => entry.id),
      documents: entries.map((entry) =>
        entry.text === null
          ? { id: documentId(entry.id), title: entry.id, text: entry.id }
          : { id: documentId(entry.text, entry.id), title: entry.id, text: entry.text },
      ),
      asOf,
      type: typeof record.type === 'string' ? record.type : typeof record.kind === 'string' ? record.kind : null,
      previousAnswers: Array.isArray(record.previousAnswers) ? record.previousAnswers.filter((a): a is string => typeof a === 'string') : [],
      ...(Array.isArray(record.evidence) ? { evidence: record.evidence.filter((e): e is string => typeof e === 'string') } : {}),
      ...(typeof record.kind === 'string' && typeof record.type === 'string' ? { kind: record.kind } : {}),
      ...(typeof record.dialogueId === 'string' && Number.isInteger(record.turn) ? { dialogue: { id: record.dialogueId, turn: record.turn as number } } : {}),
    });
  }
  if (items.length === 0 && problems.length === 0) problems.push({ source, line: 1, message: 'no questions' });
  if (problems.length > 0) throw new InvalidQaFileError(problems);
  return items;
}

export interface RetrievalScores {
  questions: number;
  recallAt1: number;
  recallAt5: number;
  recallAt20: number;
  mrrAt20: number;
}

/**
 * A hit is relevant when it comes from one of the item's own contexts (articles) and contains
 * a gold answer string (case-insensitively).
 */
export function isRelevant(item: QaItem, hit: Pick<SearchHit, 'articleId' | 'text'>): boolean {
  if (item.context.length > 0 && !item.context.includes(hit.articleId)) return false;
  const text = hit.text.toLowerCase();
  return item.answers.some((answer) => answer.trim() !== '' && text.includes(answer.toLowerCase()));
}

const DEPTH = 20;
const BATCH = 64;

/** Any search that answers a batch of questions as of one instant: in process, or a server over GraphQL. */
export type EvaluatedSearch = (
  questions: string[],
  options: { asOf: Date; k: number; mode: SearchMode; unit: SearchUnit },
) => Promise<Array<Array<Pick<SearchHit, 'articleId' | 'text'>>>>;

/** Recall@1/5/20 and MRR@20 of one search mode over a QA set, asking each item as of its own date. */
export async function evaluateRetrieval(
  search: EvaluatedSearch,
  items: readonly QaItem[],
  options: { mode: SearchMode; unit?: SearchUnit; defaultAsOf: Date },
): Promise<RetrievalScores> {
  const totals = { recallAt1: 0, recallAt5: 0, recallAt20: 0, mrrAt20: 0 };
  const byDate = new Map<number, QaItem[]>();
  for (const item of items) {
    const at = (item.asOf ?? options.defaultAsOf).getTime();
    byDate.set(at, [...(byDate.get(at) ?? []), item]);
  }
  for (const [at, group] of byDate) {
    for (let start = 0; start < group.length; start += BATCH) {
      const batch = group.slice(start, start + BATCH);
      const results = await search(
        batch.map((item) => item.question),
        { asOf: new Date(at), k: DEPTH, mode: options.mode, unit: options.unit ?? SearchUnit.PASSAGE },
      );
      batch.forEach((item, index) => {
        const firstRelevant = results[index]!.findIndex((hit) => isRelevant(item, hit));
        if (firstRelevant < 0) return;
        totals.recallAt1 += firstRelevant < 1 ? 1 : 0;
        totals.recallAt5 += firstRelevant < 5 ? 1 : 0;
        totals.recallAt20 += 1;
        totals.mrrAt20 += 1 / (firstRelevant + 1);
      });
    }
  }
  const n = Math.max(items.length, 1);
  return {
    questions: items.length,
    recallAt1: totals.recallAt1 / n,
    recallAt5: totals.recallAt5 / n,
    recallAt20: totals.recallAt20 / n,
    mrrAt20: totals.mrrAt20 / n,
  };
}

/** The in-process search of a retrieval service, as an EvaluatedSearch. */
export function serviceSearch(retrieval: RetrievalService): EvaluatedSearch {
  return (questions, options) => retrieval.batchSearch(questions, options);
}

/**
 * Which half of a QA set an item is in, by its first context title: the titles in order of
 * first appearance alternate between `tune` (1st, 3rd, …) and `held-out` (2nd, 4th, …), so
 * no article has questions on both sides.
 */
export function splitByArticle(items: readonly QaItem[], part: 'tune' | 'held-out' | 'all'): QaItem[] {
  if (part === 'all') return [...items];
  const order = new Map<string, number>();
  for (const item of items) {
    const title = item.documents[0]?.title ?? item.context[0] ?? '';
    if (!order.has(title)) order.set(title, order.size);
  }
  const wanted = part === 'tune' ? 0 : 1;
  return items.filter((item) => order.get(item.documents[0]?.title ?? item.context[0] ?? '')! % 2 === wanted);
}

/** The items' own contexts as one snapshot (one article per distinct text), and the items pointed at them. */
export function contextsAsCorpus(items: readonly QaItem[]): {
  articles: Array<{ id: string; title: string; text: string; infobox: Record<string, string> }>;
  items: QaItem[];
} {
  const documents = new Map(items.flatMap((item) => item.documents).map((doc) => [doc.id, doc]));
  if (documents.size === 0) throw new RangeError('--contexts-as-corpus needs items with "context"');
  return {
    articles: [...documents.values()].map((doc) => ({ id: doc.id, title: doc.title, text: doc.text, infobox: {} })),
    items: items.map((item): QaItem => ({ ...item, context: item.documents.map((doc) => doc.id) })),
  };
}

export const EVALUATED_MODES = [SearchMode.HYBRID, SearchMode.DENSE, SearchMode.LEXICAL, SearchMode.NEO4J_VECTOR];
