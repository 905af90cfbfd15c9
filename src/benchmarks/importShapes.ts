/**
 * Public QA sets in the shapes they are published in, read into one item shape for the living
 * benchmark. The whole text is checked first: every problem is reported as `source:where:
 * problem`, where is a line (JSON Lines) or a record path (a JSON document), and nothing is
 * returned unless every record is good.
 *
 * The shapes, and where they were confirmed:
 * - SQuAD: the official nested JSON (`data[].paragraphs[].qas[]`), and flat JSON Lines records,
 *   ChronoQL's QA format as in data/squad (`answers` a list, `context` a list of {title, text})
 *   or Hugging Face's (`answers` {text: [...]}, `context` a string, `title`).
 * - RetrievalQA (Zhang et al., 2024): github.com/hyintell/RetrievalQA, README.md and
 *   data/retrievalqa_gpt4.jsonl: JSON Lines of {data_source, question_id, question, ground_truth:
 *   [string], context: [{title, text}], prompt_token_num}; titles may be empty. The Hugging Face
 *   copy (zihanz/RetrievalQA) adds param_knowledge_answerable (0/1), which scoring does not use,
 *   and some of its exports hold each context entry as a JSON-encoded string.
 * - DynaQuest (Lin et al., 2025): the data itself is on Google Drive, which could not be read;
 *   what github.com/nusnlp/DynaQuest shows is CARL/data/sample.jsonl ({question, answer,
 *   answer_old, paragraphs: [{title, text}], ans_in_context}) and the fields CARL/run_inference.py
 *   reads from the dated combined_data.json lists ({id, page, question, answer, type, context:
 *   [string]}, skipping answer "Unknown"). Neither shows a date or the spelling of `type`, so
 *   `date`/`timestamp`/`asOf` and new/updated/changed/unchanged are accepted as documented here.
 */
import { createHash } from 'node:crypto';
import { isoDay, parseDateInput } from '../domain/time.js';
import { normalizeAnswer } from '../text/normalize.js';
import type { BenchmarkItemType } from './types.js';

export type ImportShape = 'squad' | 'retrievalqa' | 'dynaquest';

export interface ImportedItem {
  id: string;
  question: string;
  answers: string[];
  contexts: Array<{ title: string; text: string }>;
  /** YYYY-MM-DD, or an ISO 8601 date-time when the source gave a time. */
  asOf: string | null;
  type: BenchmarkItemType | null;
  previousAnswers: string[];
}

export interface ImportProblem {
  source: string;
  /** A 1-based line of JSON Lines, or a record's path in a JSON document (`data[0].paragraphs[2].qas[1]`). */
  where: number | string;
  message: string;
}

/** An import rejected as a whole, with every problem found (the first ten in the message). */
export class InvalidImportError extends Error {
  readonly code = 'INVALID_IMPORT';

  constructor(readonly problems: ImportProblem[]) {
    const shown = problems.slice(0, 10).map((p) => `  ${p.source}:${p.where}: ${p.message}`);
    const more = problems.length > shown.length ? [`  ... and ${problems.length - shown.length} more`] : [];
    super([`import rejected (${problems.length} problem(s)):`, ...shown, ...more].join('\n'));
    this.name = 'InvalidImportError';
  }
}

interface SourceRecord {
  value: unknown;
  where: number | string;
  /** The paragraph a nested SQuAD question belongs to. */
  context?: { title: string; text: string };
}

/** A record that the set itself marks as having no answer; the set's own scoring leaves it out, and so does the import. */
const UNANSWERABLE = Symbol('unanswerable');

type Checked = Omit<ImportedItem, 'id'> & { id: string | null };

type RecordCheck = (record: Record<string, unknown>, problems: string[], context: SourceRecord['context']) => Checked | typeof UNANSWERABLE;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The line where JSON.parse stopped, when its message gives the position (V8 does for most faults, not for an unexpected token). */
function lineOfPosition(text: string, message: string): number {
  const position = /at position (\d+)/.exec(message);
  return position ? text.slice(0, Number(position[1])).split('\n').length : 1;
}

/**
 * The records of a text: a JSON list, one JSON document (a nested SQuAD file), or JSON Lines.
 * A text is JSON Lines when it is not one JSON value and its first line is an object by itself;
 * otherwise it is a broken JSON document, reported once where the parser stopped.
 */
function sourceRecords(text: string, shape: ImportShape, source: string, problems: ImportProblem[]): SourceRecord[] {
  let whole: unknown;
  let wholeError: Error | null = null;
  try {
    whole = JSON.parse(text);
  } catch (error) {
    wholeError = error as Error;
  }
  const lines = text.split('\n');
  const firstLine = lines.findIndex((line) => line.trim() !== '');
  if (wholeError === null) {
    if (Array.isArray(whole)) return whole.map((value, i) => ({ value, where: `[${i}]` }));
    if (shape === 'squad' && isRecord(whole) && 'data' in whole) return nestedSquadRecords(whole, source, problems);
    return [{ value: whole, where: firstLine + 1 }];
  }
  if (firstLine < 0) return [];
  if (!isRecord(parseOrUndefined(lines[firstLine]!))) {
    problems.push({ source, where: lineOfPosition(text, wholeError.message), message: `invalid JSON: ${wholeError.message}` });
    return [];
  }
  const records: SourceRecord[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      records.push({ value: JSON.parse(line), where: i + 1 });
    } catch (error) {
      problems.push({ source, where: i + 1, message: `invalid JSON: ${(error as Error).message}` });
    }
  });
  return records;
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function nestedSquadRecords(document: Record<string, unknown>, source: string, problems: ImportProblem[]): SourceRecord[] {
  const records: SourceRecord[] = [];
  const report = (where: string, message: string): void => {
    problems.push({ source, where, message });
  };
  if (!Array.isArray(document.data)) report('data', '"data" must be a list of articles');
  else {
    document.data.forEach((article: unknown, a) => {
      const articlePath = `data[${a}]`;
      if (!isRecord(article) || typeof article.title !== 'string' || !Array.isArray(article.paragraphs)) {
        report(articlePath, 'an article must be an object with a string "title" and a list "paragraphs"');
        return;
      }
      article.paragraphs.forEach((paragraph: unknown, p) => {
        const paragraphPath = `${articlePath}.paragraphs[${p}]`;
        if (!isRecord(paragraph) || typeof paragraph.context !== 'string' || !Array.isArray(paragraph.qas)) {
          report(paragraphPath, 'a paragraph must be an object with a string "context" and a list "qas"');
          return;
        }
        const context = { title: article.title as string, text: paragraph.context };
        paragraph.qas.forEach((value: unknown, q) => records.push({ value, where: `${paragraphPath}.qas[${q}]`, context }));
      });
    });
  }
  return records;
}

function nonEmptyString(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

function question(record: Record<string, unknown>, problems: string[]): string {
  const text = nonEmptyString(record.question);
  if (text === null) problems.push('"question" must be a non-empty string');
  return text ?? '';
}

/** A record's own id, when it has one: a string or a number; absent ids are numbered from the source later. */
function recordId(value: unknown, field: string, problems: string[]): string | null {
  if (value === undefined || value === null) return null;
  if ((typeof value === 'string' && value.trim() !== '') || (typeof value === 'number' && Number.isFinite(value))) return String(value).trim();
  problems.push(`"${field}" must be a non-empty string or a number when given`);
  return null;
}

interface ListRule {
  required: boolean;
  /** DynaQuest gives one answer as a string ("answer", "answer_old"); the other sets always give lists. */
  oneMayStandAlone?: boolean;
}

/** A list of non-empty strings, without repeats. */
function stringList(value: unknown, field: string, problems: string[], { required, oneMayStandAlone = false }: ListRule): string[] {
  const list = oneMayStandAlone && typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || !list.every((item) => nonEmptyString(item) !== null)) {
    if (required || (value !== undefined && value !== null)) problems.push(`"${field}" must be a list of non-empty strings`);
    return [];
  }
  if (required && list.length === 0) problems.push(`"${field}" is empty: an item needs at least one answer`);
  return [...new Set((list as string[]).map((item) => item.trim()))];
}

/** A context entry: {title, text} (title may be empty or absent), or a bare text under the record's title. */
function contextList(value: unknown, field: string, problems: string[], titleOfBareText: string): Array<{ title: string; text: string }> | null {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`"${field}" must be a list of {title, text} objects or of texts`);
    return null;
  }
  const contexts: Array<{ title: string; text: string }> = [];
  value.forEach((entry: unknown, i) => {
    const decoded = typeof entry === 'string' && entry.trimStart().startsWith('{') ? (parseOrUndefined(entry) ?? entry) : entry;
    if (typeof decoded === 'string') contexts.push({ title: titleOfBareText, text: decoded });
    else if (
      isRecord(decoded) &&
      typeof decoded.text === 'string' &&
      (decoded.title === undefined || decoded.title === null || typeof decoded.title === 'string')
    ) {
      contexts.push({ title: (decoded.title as string | null | undefined) ?? '', text: decoded.text });
    } else problems.push(`"${field}"[${i}] must be a {title, text} object or a text`);
  });
  return contexts;
}

function asOfDate(value: unknown, field: string, problems: string[]): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    problems.push(`"${field}" must be a date string (YYYY-MM-DD or ISO 8601)`);
    return null;
  }
  try {
    const date = parseDateInput(value, `"${field}"`);
    return /^\s*\d{4}-\d{2}-\d{2}\s*$/.test(value) ? isoDay(date) : date.toISOString();
  } catch (error) {
    problems.push((error as Error).message);
    return null;
  }
}

const TYPE_NAMES: Record<string, BenchmarkItemType> = { new: 'NEW', changed: 'CHANGED', updated: 'CHANGED', unchanged: 'UNCHANGED' };

function itemType(value: unknown, field: string, problems: string[]): BenchmarkItemType | null {
  if (value === undefined || value === null) return null;
  const type = typeof value === 'string' ? TYPE_NAMES[value.trim().toLowerCase()] : undefined;
  if (type === undefined) problems.push(`"${field}" must be one of new, updated (or changed), unchanged; got ${JSON.stringify(value)}`);
  return type ?? null;
}

/** Previous answers that are not also current ones: an answer that held before and still holds did not change. */
function changedFrom(previous: string[], answers: string[]): string[] {
  const current = new Set(answers.map(normalizeAnswer));
  return previous.filter((answer) => !current.has(normalizeAnswer(answer)));
}

function squadAnswers(value: unknown, problems: string[]): string[] {
  // Hugging Face's flat SQuAD keeps answers as parallel lists: {text: [...], answer_start: [...]}.
  if (isRecord(value)) return stringList(value.text, 'answers.text', problems, { required: true });
  if (Array.isArray(value) && value.length > 0 && value.every(isRecord)) {
    if (!value.every((answer) => nonEmptyString(answer.text) !== null)) {
      problems.push('every answer must have a non-empty string "text"');
      return [];
    }
    return [...new Set(value.map((answer) => (answer.text as string).trim()))];
  }
  return stringList(value, 'answers', problems, { required: true });
}

const checkSquad: RecordCheck = (record, problems, paragraph) => {
  const unanswerable = record.is_impossible === true && Array.isArray(record.answers) && record.answers.length === 0;
  if (unanswerable) return UNANSWERABLE;
  const flatContext =
    typeof record.context === 'string'
      ? [{ title: typeof record.title === 'string' ? record.title : '', text: record.context }]
      : contextList(record.context, 'context', problems, '');
  const id = recordId(record.id, 'id', problems);
  const text = question(record, problems);
  const answers = squadAnswers(record.answers, problems);
  return {
    id,
    question: text,
    answers,
    contexts: paragraph ? [paragraph] : (flatContext ?? []),
    asOf: asOfDate(record.asOf, 'asOf', problems),
    type: itemType(record.type, 'type', problems),
    previousAnswers: changedFrom(stringList(record.previousAnswers, 'previousAnswers', problems, { required: false }), answers),
  };
};

/** RealTimeQA's question ids carry the date of the quiz that asked them: realtimeqa_20231013_1. */
const REALTIMEQA_ID = /^realtimeqa_(\d{4})(\d{2})(\d{2})_/;

/** The quiz day of a RealTimeQA id, or null: an id of another form, or no real date, just has no day. */
function quizDay(id: string | null): string | null {
  const match = id === null ? null : REALTIMEQA_ID.exec(id);
  if (match === null) return null;
  try {
    return isoDay(parseDateInput(`${match[1]}-${match[2]}-${match[3]}`, 'question_id'));
  } catch {
    return null;
  }
}

const checkRetrievalQa: RecordCheck = (record, problems) => {
  const id = recordId(record.question_id, 'question_id', problems);
  return {
    id,
    question: question(record, problems),
    answers: stringList(record.ground_truth, 'ground_truth', problems, { required: true }),
    contexts: contextList(record.context, 'context', problems, '') ?? [],
    asOf: quizDay(id),
    type: null,
    previousAnswers: [],
  };
};

function firstPresent(record: Record<string, unknown>, fields: readonly string[]): [string, unknown] {
  const field = fields.find((name) => record[name] !== undefined && record[name] !== null) ?? fields[0]!;
  return [field, record[field]];
}

const checkDynaQuest: RecordCheck = (record, problems) => {
  const [answerField, answerValue] = firstPresent(record, ['answers', 'answer']);
  // DynaQuest marks an attribute whose value could not be found as "Unknown", and its evaluation skips it.
  if (answerValue === 'Unknown') return UNANSWERABLE;
  const answers = stringList(answerValue, answerField, problems, { required: true, oneMayStandAlone: true });
  const [previousField, previousValue] = firstPresent(record, ['previous_answers', 'previous_answer', 'answer_old']);
  const [contextField, contextValue] = firstPresent(record, ['paragraphs', 'context']);
  const [dateField, dateValue] = firstPresent(record, ['date', 'timestamp', 'asOf']);
  return {
    id: recordId(record.id, 'id', problems),
    question: question(record, problems),
    answers,
    contexts: contextList(contextValue, contextField, problems, typeof record.page === 'string' ? record.page : '') ?? [],
    asOf: asOfDate(dateValue, dateField, problems),
    type: itemType(record.type, 'type', problems),
    previousAnswers: changedFrom(stringList(previousValue, previousField, problems, { required: false, oneMayStandAlone: true }), answers),
  };
};

const CHECKS: Record<ImportShape, RecordCheck> = { squad: checkSquad, retrievalqa: checkRetrievalQa, dynaquest: checkDynaQuest };

/** Reads a public QA set of the given shape; throws InvalidImportError with every problem, or returns every item. */
export function parseImportedItems(text: string, shape: ImportShape, source: string): { items: ImportedItem[] } {
  const problems: ImportProblem[] = [];
  const items: ImportedItem[] = [];
  const firstWhereOfId = new Map<string, number | string>();
  // Editors on Windows may start a UTF-8 file with a byte-order mark, which JSON.parse refuses.
  for (const { value, where, context } of sourceRecords(text.replace(/^\uFEFF/, ''), shape, source, problems)) {
    if (!isRecord(value)) {
      problems.push({ source, where, message: 'expected a JSON object' });
      continue;
    }
    const messages: string[] = [];
    const checked = CHECKS[shape](value, messages, context);
    if (messages.length > 0) {
      problems.push(...messages.map((message) => ({ source, where, message })));
      continue;
    }
    if (checked === UNANSWERABLE) continue;
    // A record without an id is named by what it asks, so adding a line elsewhere in the file does not rename it.
    const id =
      checked.id ??
      createHash('sha256')
        .update(JSON.stringify([checked.question, checked.answers]))
        .digest('hex')
        .slice(0, 16);
    const seenAt = firstWhereOfId.get(id);
    if (seenAt !== undefined) {
      problems.push({ source, where, message: `id "${id}" appears twice (first at ${seenAt})` });
      continue;
    }
    firstWhereOfId.set(id, where);
    items.push({ ...checked, id });
  }
  if (items.length === 0 && problems.length === 0) problems.push({ source, where: 1, message: 'no answerable questions' });
  // JSON Lines are reported in line order, though a line that is not JSON is found before the records are checked.
  const byLine = (a: ImportProblem, b: ImportProblem): number => (typeof a.where === 'number' && typeof b.where === 'number' ? a.where - b.where : 0);
  if (problems.length > 0) throw new InvalidImportError(problems.sort(byLine));
  return { items };
}
