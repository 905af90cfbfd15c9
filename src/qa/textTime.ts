/**
 * A question's period read in the text (event time): which sentences state a time in the
 * period, how well that time fits it, and which part of a sentence the time governs. "He managed
 * Alfreton Town from 2005 to 2007, and Gateshead from 2007 to 2009" holds two answers; the clause
 * each range governs tells which belongs to 2005–2007.
 */
import { splitSentences } from '../ingest/sentenceSplitter.js';
import type { EventTime } from '../domain/model.js';
import type { Period } from '../domain/time.js';

export type { Period };

/**
 * Reads the times each sentence of a paragraph states, in order; a relative one ("two years
 * later") is placed from those before it (text/eventTimes.ts, bound in by the composition root).
 */
export type TimeReader = (sentences: readonly string[]) => EventTime[][];

/** Before every time a text might state: the closed form of an open start. */
const EARLIEST = Date.UTC(-4000, 0, 1);
export const DAY = 86_400_000;

/**
 * How well a stated time fits the asked period, in (0, 1], or 0 when they do not meet: the share
 * of their union they have in common, or, for a shorter time that holds an end of the period, at
 * least ANCHOR_FIT. An open start is closed at the earliest time and an open
 * end at `horizon` (the question's asOf): "since 2019" fits "in 2020" less well than "in 2020"
 * does, and of two times that hold at an instant the more recent start fits it better.
 */
export function periodFit(asked: Period, stated: Period, horizon: Date): number {
  const closed = ({ from, to }: Period): [number, number] => {
    const start = from?.getTime() ?? EARLIEST;
    return [start, to?.getTime() ?? Math.max(horizon.getTime(), start + DAY)];
  };
  const [a0, a1] = closed(asked);
  const [s0, s1] = closed(stated);
  const common = Math.min(a1, s1) - Math.max(a0, s0);
  if (common <= 0) return 0;
  // A shorter stated time at an end of the asked period says when it began or ended: "In March
  // 2012 he became Vicar General" for "from March 2012 to February 2014". Not an open claim, whose
  // end is only the horizon: "since 11 December 2024" does not end 2024.
  const closedTime = stated.from !== null && stated.to !== null && s1 - s0 < a1 - a0;
  const atEnds = closedTime ? (s0 <= a0 && a0 < s1 ? ANCHOR_FIT : 0) + (s0 < a1 && a1 <= s1 ? ANCHOR_FIT : 0) : 0;
  return Math.max(atEnds, common / (Math.max(a1, s1) - Math.min(a0, s0)));
}

/** The fit of a time that states one end of the asked period (both ends: twice this). */
const ANCHOR_FIT = 0.5;

/**
 * The part of a sentence each stated time governs. A time that opens its clause ("In 2005 he
 * joined X") governs what follows it, up to the next time; one that closes it ("he joined X in
 * 2005") governs what precedes it, back to the time before it.
 */
export function governedSpans(sentence: string, times: readonly EventTime[]): Array<{ time: EventTime; start: number; end: number }> {
  const ordered = [...times].sort((a, b) => a.start - b.start);
  // A sentence that states one time speaks of it throughout: "Catherine the Great, who in 1780
  // made Vologda the center of Vologda Viceroyalty".
  if (ordered.length === 1) return [{ time: ordered[0]!, start: 0, end: sentence.length }];
  return ordered.map((time, i) => {
    const previousEnd = i > 0 ? ordered[i - 1]!.end : 0;
    const nextStart = i + 1 < ordered.length ? ordered[i + 1]!.start : sentence.length;
    const lead = sentence.slice(previousEnd, time.start);
    // A time that ends its sentence governs what precedes it, after a comma too: "- Volodymyr
    // Radchenko, February 10, 2001 – September 2, 2003", a list of office holders.
    // A time in brackets ("Sir Warren Fisher (1919–1939), then …") speaks of the words before it, whatever follows.
    const bracketed = /^\s*[)\]]/.test(sentence.slice(time.end));
    const opens = !bracketed && OPENS_CLAUSE.test(lead) && WORD.test(sentence.slice(time.end, nextStart));
    return opens ? { time, start: time.start, end: nextStart } : { time, start: previousEnd, end: time.end };
  });
}

const WORD = /[\p{L}\p{N}]/u;

/** What stands before a time that opens its clause: nothing, a clause boundary, or a conjunction. */
const OPENS_CLAUSE = /(?:^[^\p{L}\p{N}]*|[,;:(]\s*|\b(?:and|but|then|while|when|whereas)\s+)$/iu;

/**
 * Whether a time tells of a period it meets (domain/time.ts `speaksOf` asks only whether they meet).
 * One open at its start ("until 24 November 2018") says when something ended, not since when it
 * held: it tells of a period it ends in, not of 1850. One open at its end ("since 2005") is claimed
 * up to the source's present, so it tells of all of it.
 */
function tellsOf(period: Period, time: Period): boolean {
  if (time.from !== null || time.to === null || period.from === null || period.to === null) return true;
  return period.from < time.to && time.to <= period.to;
}

const BORN_BEFORE = /\bborn\s*$/i;

/** How much of its fit a time keeps for the sentences after it that state none. */
const TOLD_BEFORE_FIT = 0.5;

export interface Reading {
  /**
   * The words a time that fits the period governs, the time's own words left out: what the reader
   * reads. The question already names the period, so "1916–1920" is never what it asks for, and
   * left in, it is the span a reader most often takes for a who-question's answer.
   */
  text: string;
  /** The time, as the text states it. */
  time: EventTime;
  fit: number;
  /** The whole sentence it was read from. */
  sentence: string;
}

/** What a text says about the period: the part of each of its sentences governed by a time that fits, best fit first. */
export function readingsFor(text: string, period: Period, timesIn: TimeReader, horizon: Date): Reading[] {
  const readings: Reading[] = [];
  const sentences = splitSentences(text);
  const times = timesIn(sentences.map((sentence) => sentence.text));
  let told: EventTime | null = null;
  for (const [i, sentence] of sentences.entries()) {
    const own = times[i] ?? [];
    // A sentence that states no time goes on with the last one its paragraph stated ("In 1942 Flowers was
    // set to work on Tunny. With Frank Morrell he designed the Heath Robinson"), less surely than it.
    if (own.length === 0 && told !== null) {
      const fit = TOLD_BEFORE_FIT * periodFit(period, told, horizon);
      if (fit > 0 && tellsOf(period, told) && WORD.test(sentence.text)) readings.push({ text: sentence.text, time: told, fit, sentence: sentence.text });
      continue;
    }
    if (own.length > 0) told = own.reduce((last, time) => (time.start > last.start ? time : last));
    for (const { time, start, end } of governedSpans(sentence.text, own)) {
      const fit = periodFit(period, time, horizon);
      // A birth date dates the person, not what the sentence says they did ("Maurizio Sarri (born 10
      // January 1959) is a manager who most recently managed Juventus").
      if (fit === 0 || !tellsOf(period, time) || BORN_BEFORE.test(sentence.text.slice(Math.max(0, time.start - 12), time.start))) continue;
      const governed = `${sentence.text.slice(start, time.start)} ${sentence.text.slice(time.end, end)}`;
      const words = governed
        // Brackets that held only the time ("Sir Warren Fisher (1919–1939)") would end the reader's span.
        .replace(/[([][^\p{L}\p{N}()[\]]*[)\]]/gu, ' ')
        .replace(/\s+/g, ' ')
        .replace(/ (?=[.,;:!?])/g, '')
        .replace(/^[\s,;:]+|[\s,;:(]+$/g, '');
      if (WORD.test(words)) readings.push({ text: words, time, fit, sentence: sentence.text });
    }
  }
  return readings.sort((a, b) => b.fit - a.fit);
}
