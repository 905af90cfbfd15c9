/**
 * Event-time extraction scored against hand-checked sentences (data/eval/event-times.jsonl): an
 * interval found is right when an expected one of the same sentence has the same start and end
 * (both to the day, open bounds alike) and their words overlap in the sentence.
 */
import { readFile } from 'node:fs/promises';
import { readParagraphEventTimes, type EventTime } from '../src/text/eventTimes.js';

export type EventTimeSplit = 'tune' | 'report' | 'fresh';

export interface ExpectedEventTime {
  text: string;
  /** The first day (ISO 8601, extended years for BC: "-000138-01-01"), or null when open. */
  from: string | null;
  /** The first day after, or null when open. */
  to: string | null;
}

export interface EventTimeCase {
  id: string;
  /**
   * `tune`: what the extractor was tuned on; `report`: what it is reported on (read, not run,
   * while the rules were written); `fresh`: labelled after the extractor was frozen, run once.
   */
  split: EventTimeSplit;
  source: string;
  title: string;
  /** The sentences of the paragraph before this one, which relative times are placed from. */
  context: string[];
  sentence: string;
  expected: ExpectedEventTime[];
}

export interface EventTimeFailure {
  id: string;
  sentence: string;
  missed: ExpectedEventTime[];
  wrong: ExpectedEventTime[];
}

export interface EventTimeScore {
  split: string;
  sentences: number;
  expected: number;
  found: number;
  correct: number;
  precision: number;
  recall: number;
  failures: EventTimeFailure[];
}

export async function readEventTimeCases(file: string): Promise<EventTimeCase[]> {
  const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => line.trim() !== '');
  return lines.map((line, index) => {
    const row = JSON.parse(line) as EventTimeCase;
    for (const expected of row.expected) {
      if (!row.sentence.includes(expected.text)) throw new Error(`${file}:${index + 1}: "${expected.text}" is not in the sentence of ${row.id}`);
    }
    return row;
  });
}

const isoDay = (date: Date | null): string | null => (date ? date.toISOString().replace(/T.*$/, '') : null);

function asExpected(time: EventTime): ExpectedEventTime {
  return { text: time.text, from: isoDay(time.from), to: isoDay(time.to) };
}

export function scoreEventTimes(cases: readonly EventTimeCase[], split: EventTimeSplit | 'all'): EventTimeScore {
  const chosen = cases.filter((row) => split === 'all' || row.split === split);
  let found = 0;
  let correct = 0;
  const failures: EventTimeFailure[] = [];
  for (const row of chosen) {
    const read = readParagraphEventTimes([...row.context, row.sentence]).at(-1)!;
    const open = row.expected.map((expected) => ({ expected, start: row.sentence.indexOf(expected.text), matched: false }));
    const wrong: ExpectedEventTime[] = [];
    for (const time of read) {
      const got = asExpected(time);
      const match = open.find(
        (candidate) =>
          !candidate.matched &&
          candidate.expected.from === got.from &&
          candidate.expected.to === got.to &&
          time.start < candidate.start + candidate.expected.text.length &&
          time.end > candidate.start,
      );
      if (match) match.matched = true;
      else wrong.push(got);
    }
    found += read.length;
    correct += read.length - wrong.length;
    const missed = open.filter((candidate) => !candidate.matched).map((candidate) => candidate.expected);
    if (missed.length > 0 || wrong.length > 0) failures.push({ id: row.id, sentence: row.sentence, missed, wrong });
  }
  const expected = chosen.reduce((sum, row) => sum + row.expected.length, 0);
  const ratio = (part: number, whole: number): number => (whole === 0 ? 1 : Number((part / whole).toFixed(3)));
  return { split, sentences: chosen.length, expected, found, correct, precision: ratio(correct, found), recall: ratio(correct, expected), failures };
}
