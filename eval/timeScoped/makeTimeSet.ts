/**
 * A time-scoped QA set built from real paragraphs (a SQuAD file): for one question per
 * paragraph, the answer is replaced in the paragraph by another answer of the same shape (a
 * year by a year, a number by a number, a name by a name, from the same article where it can),
 * and the two versions become two dated snapshots. Each question is then asked as of a date in
 * each snapshot, and after the change with time expressions that point before it ("In 2022, …",
 * "Before 2023, …"), so the right answer is the value valid at the asked time.
 */
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { seededRandom } from '../../src/learning/random.js';
import type { QaItem } from '../qaFile.js';

export const TIME_SET_DATES = { first: '2021-03-01', second: '2023-06-01', beforeChange: '2022-06-01', afterChange: '2024-06-01' } as const;

type Shape = 'year' | 'number' | 'name';

/** A name is capitalised words (joined by "of", "de", "and"), at most five, ending in a letter. */
const NAME = /^\p{Lu}[\p{L}'’.-]*(\s+(of|de|and|\p{Lu}[\p{L}'’.-]*))*$/u;

function shapeOf(answer: string): Shape | null {
  if (/[^\p{L}\p{N}%)]$/u.test(answer)) return null;
  if (/^(1[5-9]|20)\d\d$/.test(answer)) return 'year';
  if (/\d/.test(answer)) return 'number';
  if (NAME.test(answer) && !/^(The|A|An)\s/.test(answer) && answer.split(/\s+/).length <= 5) return 'name';
  return null;
}

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

function lowerFirst(question: string): string {
  return /^\p{Lu}\p{Ll}/u.test(question) ? question[0]!.toLowerCase() + question.slice(1) : question;
}

export interface TimeSetItem {
  question: string;
  answers: string[];
  previousAnswers: string[];
  asOf: string;
  context: string[];
  /** Asked before the change, after it, or after it about a time before it (a time expression). */
  type: 'UNCHANGED_BEFORE' | 'CHANGED_AFTER' | 'SCOPED_BEFORE';
}

/** Writes snapshot-<date>.jsonl (two), snapshots.json and questions.jsonl into `dir`; returns counts. */
export async function makeTimeSet(
  items: readonly QaItem[],
  options: { dir: string; paragraphs: number; seed: number },
): Promise<{ paragraphs: number; changed: number; questions: number }> {
  const random = seededRandom(options.seed);
  const byParagraph = new Map<string, QaItem[]>();
  for (const item of items) {
    const text = item.documents[0]?.text;
    if (text) byParagraph.set(text, [...(byParagraph.get(text) ?? []), item]);
  }
  const pool = new Map<Shape, Array<{ title: string; answer: string }>>();
  for (const item of items) {
    const answer = item.answers[0]!;
    const shape = shapeOf(answer);
    if (shape) pool.set(shape, [...(pool.get(shape) ?? []), { title: item.documents[0]?.title ?? '', answer }]);
  }
  const paragraphs = [...byParagraph.entries()];
  const order = paragraphs.map((_, i) => ({ i, key: random() })).sort((a, b) => a.key - b.key);
  const changed = new Map<string, { text: string; item: QaItem; replacement: string }>();
  for (const { i } of order) {
    if (changed.size >= options.paragraphs) break;
    const [text, questions] = paragraphs[i]!;
    for (const item of questions) {
      const answer = item.answers[0]!;
      const shape = shapeOf(answer);
      if (!shape || occurrences(text, answer) !== 1 || item.question.includes(answer)) continue;
      const candidates = (pool.get(shape) ?? []).filter(
        (other) => other.answer !== answer && !text.includes(other.answer) && !item.question.includes(other.answer),
      );
      const sameArticle = candidates.filter((other) => other.title === item.documents[0]!.title);
      const from = sameArticle.length > 0 ? sameArticle : candidates;
      if (from.length === 0) continue;
      const replacement = from[Math.floor(random() * from.length)]!.answer;
      changed.set(text, { text: text.replace(answer, replacement), item, replacement });
      break;
    }
  }
  const articleId = (text: string, title: string): string => `${title} ¶${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
  const firstSnapshot = paragraphs.map(([text, questions]) => ({
    id: articleId(text, questions[0]!.documents[0]!.title),
    title: questions[0]!.documents[0]!.title,
    text,
    infobox: {},
  }));
  const secondSnapshot = firstSnapshot.map((article) => ({ ...article, text: changed.get(article.text)?.text ?? article.text }));
  const questions: TimeSetItem[] = [];
  for (const [text, { item, replacement }] of changed) {
    const original = item.answers.filter((answer) => occurrences(text, answer) >= 1);
    const context = [articleId(text, item.documents[0]!.title)];
    const plain = item.question;
    const yearBefore = TIME_SET_DATES.beforeChange.slice(0, 4);
    questions.push(
      { question: plain, answers: original, previousAnswers: [], asOf: TIME_SET_DATES.beforeChange, context, type: 'UNCHANGED_BEFORE' },
      { question: plain, answers: [replacement], previousAnswers: original, asOf: TIME_SET_DATES.afterChange, context, type: 'CHANGED_AFTER' },
      {
        question: `In ${yearBefore}, ${lowerFirst(plain)}`,
        answers: original,
        previousAnswers: [replacement],
        asOf: TIME_SET_DATES.afterChange,
        context,
        type: 'SCOPED_BEFORE',
      },
      {
        question: `Before ${Number(yearBefore) + 1}, ${lowerFirst(plain)}`,
        answers: original,
        previousAnswers: [replacement],
        asOf: TIME_SET_DATES.afterChange,
        context,
        type: 'SCOPED_BEFORE',
      },
    );
  }
  await mkdir(options.dir, { recursive: true });
  const lines = (rows: readonly object[]): string => rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
  await writeFile(join(options.dir, `snapshot-${TIME_SET_DATES.first}.jsonl`), lines(firstSnapshot));
  await writeFile(join(options.dir, `snapshot-${TIME_SET_DATES.second}.jsonl`), lines(secondSnapshot));
  await writeFile(
    join(options.dir, 'snapshots.json'),
    JSON.stringify(
      [TIME_SET_DATES.first, TIME_SET_DATES.second].map((takenAt) => ({ file: `snapshot-${takenAt}.jsonl`, takenAt, source: 'time-set' })),
      null,
      2,
    ) + '\n',
  );
  await writeFile(join(options.dir, 'questions.jsonl'), lines(questions));
  return { paragraphs: firstSnapshot.length, changed: changed.size, questions: questions.length };
}
