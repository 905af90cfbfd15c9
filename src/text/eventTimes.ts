/**
 * Event time: when the things a text states held, read from the text itself ("He managed
 * Alfreton Town from 2005 to 2007" → [2005, 2008)), as opposed to when a snapshot said them.
 *
 * Each time is a half-open UTC interval at the granularity the text states: a day, a month, a
 * year, a span of years ("2006–2009", the season "2006–07" → [2006, 2008)), a decade, a century,
 * a part of a year or decade ("late 2024", "the early 1990s"). The words around it make it a
 * range ("from 2004 to 2005", "between 1990 and 1995", "from June 1957 until 1959") or open it:
 * "since 1 June 2024" and "2019–present" have no end, "until 2019" and "by 1990" no start,
 * "before 2005" ends when 2005 begins and "after 2005" starts when 2005 ends. "Until his death in
 * 2010" ends the claim with 2010. Birth and death dates ("(born 12 May 1960)", "(d. 192 AD)") are
 * times of the person and are kept. Dates without a year ("on 28 July") and relative expressions
 * ("two years later", "the following year", "that same year") are placed from the last time the
 * paragraph stated before them; without one they are left out.
 *
 * A year that names something ("the 2022 World Cup", "Euro 2016", "a 1976 film", "the 2011 Man of
 * the Year") is not read as a time of the sentence's claim, as questions are read
 * (qa/timeScope.ts): the claim can be from any time ("the 1998 Act was repealed in 2004"). A year
 * with a preposition before it is a time even inside a name ("at the 1987 general election",
 * "in the 2014 Chess Olympiad"), and so is every decade, season and span of years.
 */
import type { EventTime } from '../domain/model.js';
import { partOfYear, TIME_GOVERNOR, utc } from './timeExpressions.js';
import { findMentions, type Mention } from './timeMentions.js';

export type { EventTime };

/** The last time a paragraph stated, which relative expressions and dates without a year are placed from. */
interface Anchor {
  year: number;
  /** 0-based; null when only the year was stated. */
  month: number | null;
}

/** A cheap first look: a sentence with none of these states no time. */
const MAY_STATE_TIME = /\d|year|decade|centur|month|season/i;
/** Words that make a time a point of its own ("not until 1990" is 1990) or open it, beyond those every reader shares. */
const NOT_BEFORE_GOVERNOR = /\bnot\s+$/i;
const BY_BEFORE_GOVERNOR = /\bby\s+$/i;
const THE_BEFORE_GOVERNOR = /\bthe\s+$/i;
/**
 * "since its inception in 1983", "until his death in 2010", "till he died in the early 1990s",
 * "until it was cancelled on September 20, 1991": the claim is bounded by an event the sentence
 * dates.
 */
const BOUNDING_EVENT =
  /\b(since|until|till|up to|from)\s+(?:(?:his|her|its|their|the|it|he|she|they)\s+)?(?:[\w'’]+\s+){0,2}?(?:death|died|inception|found(?:ing|ation|ed)|creation|created|establish(?:ment|ed)|retire(?:ment|d)|debut|launch(?:ed)?|open(?:ing|ed)|clos(?:ure|ed)|dissol(?:ution|ved)|aboli(?:tion|shed)|cancell?(?:ation|ed)|sale|sold|depart(?:ure|ed)|resign(?:ation|ed)|marriage|married|release[d]?|arriv(?:al|ed)|relegat(?:ion|ed)|demoli(?:tion|shed))\s+(?:in|on|at)\s+(?:the\s+)?$/i;
const BOUNDING_WORD = /\b(?:since|until|till|up to|from)\b/i;
/** A date's "of that year": part of the date, not a time of its own. */
const OF_THAT_YEAR = /^\s+of\s+(?:that|the\s+same)\s+year\b/i;
const OPEN_END = /^\s*[–—-]\s*(?:present|now|today|date)\b/i;
const DETERMINER_BEFORE = /\b(?:the|a|an|its|his|her|their)\s+$/i;
/** A capitalised word right before a year makes the year part of a name ("Euro 2016", "Wheel 2000"). */
const NAME_WORD_BEFORE = /(?:^|[^\p{L}\p{N}])(\p{Lu}[\p{L}'’.&-]*)\s+$/u;
const NOT_NAME_WORDS = new Set(['And', 'Or', 'Of', 'The', 'To', 'Circa', 'Early', 'Mid', 'Late']);

type Governor = { word: string; start: number } | null;

/** The word that governs a mention (lower case) and where it starts, or null. */
function governorOf(sentence: string, mention: Mention): Governor {
  const window = Math.max(0, mention.start - 80);
  const before = sentence.slice(window, mention.start);
  const bounding = BOUNDING_WORD.test(before) ? BOUNDING_EVENT.exec(before) : null;
  if (bounding) return { word: bounding[1]!.toLowerCase(), start: window + bounding.index };
  const direct = TIME_GOVERNOR.exec(before.slice(-40));
  if (!direct) return null;
  const start = mention.start - direct[0].length;
  const word = direct[1]!.toLowerCase();
  const earlier = sentence.slice(Math.max(0, start - 10), start);
  if (word === 'until' && NOT_BEFORE_GOVERNOR.test(earlier)) return { word: 'not until', start: start - NOT_BEFORE_GOVERNOR.exec(earlier)![0].length };
  if (word === 'around' && BY_BEFORE_GOVERNOR.test(earlier)) return { word: 'by', start: start - BY_BEFORE_GOVERNOR.exec(earlier)![0].length };
  // "was sacked the following 28 February": the next such day, not every day after it.
  if (word === 'following' && THE_BEFORE_GOVERNOR.test(earlier)) return null;
  return { word, start };
}

/** A bare year that is part of a name rather than a time of the claim (see the module comment). */
function namesSomething(sentence: string, mention: Mention, governor: Governor): boolean {
  if (governor !== null || mention.granularity !== 'year' || mention.end - mention.start !== 4) return false;
  const before = sentence.slice(Math.max(0, mention.start - 40), mention.start);
  if (DETERMINER_BEFORE.test(before) && /^\s+\p{L}/u.test(sentence.slice(mention.end))) return true;
  const word = NAME_WORD_BEFORE.exec(before)?.[1];
  return word !== undefined && !NOT_NAME_WORDS.has(word);
}

function anchorOf(mention: Mention): Anchor | null {
  if (mention.granularity === 'decade' || mention.granularity === 'century') return null;
  const last = mention.through ?? mention;
  const at = new Date(last.to.getTime() - 1);
  const monthly = last.granularity === 'day' || last.granularity === 'month';
  return { year: at.getUTCFullYear(), month: monthly ? at.getUTCMonth() : null };
}

/** The same day or month in another year. */
function inYear(mention: Mention, year: number): Mention {
  const month = mention.from.getUTCMonth();
  const day = mention.from.getUTCDate();
  const moved =
    mention.granularity === 'day' ? { from: utc(year, month, day), to: utc(year, month, day + 1) } : { from: utc(year, month), to: utc(year, month + 1) };
  return { ...mention, ...moved, yearImplied: false };
}

/**
 * Gives each mention its place in time: a relative expression from the anchor, a date without a
 * year in the anchor's year (or, first in a paragraph, the next year its sentence states); what
 * cannot be placed is dropped. Returns the placed mentions and the anchor they leave.
 */
function place(mentions: readonly Mention[], anchor: Anchor | null): { placed: Mention[]; anchor: Anchor | null } {
  const placed: Mention[] = [];
  let current = anchor;
  mentions.forEach((mention, index) => {
    let resolved: Mention | null = mention;
    if (mention.relative) {
      const { unit, count } = mention.relative;
      if (!current || (unit === 'month' && current.month === null)) resolved = null;
      else if (unit === 'year') resolved = { ...mention, from: utc(current.year + count), to: utc(current.year + count + 1) };
      else resolved = { ...mention, from: utc(current.year, current.month! + count), to: utc(current.year, current.month! + count + 1) };
    } else if (mention.yearImplied) {
      const later = mentions.slice(index + 1).find((other) => !other.yearImplied && !other.relative);
      let year = current?.year ?? later?.from.getUTCFullYear();
      let through = mention.through;
      // "26 July to 11 August 2024": the start is in the end's year, or the year before when its month comes later.
      if (through && !through.yearImplied) year = through.from.getUTCFullYear() - (through.from.getUTCMonth() < mention.from.getUTCMonth() ? 1 : 0);
      else if (through && year !== undefined) through = inYear(through, year + (through.from.getUTCMonth() < mention.from.getUTCMonth() ? 1 : 0));
      resolved = year === undefined ? null : { ...inYear(mention, year), through };
    }
    if (!resolved) return;
    placed.push(resolved);
    current = anchorOf(resolved) ?? current;
  });
  return { placed, anchor: current };
}

/** The interval one mention states, given the word that governs it. */
function interval(mention: Mention, governing: string | null): { from: Date | null; to: Date | null } {
  // "from 26 July to 11 August 2024", "between 139 and 125 BC": the governor belongs to the range.
  const governor = mention.through && (governing === 'from' || governing === 'between') ? null : governing;
  let { from, to } = mention.through ? { from: mention.from, to: mention.through.to } : mention;
  if (mention.decadePart) {
    // The early 1990s are 1990–1993, the mid-1990s 1994–1996, the late 1990s 1997–1999.
    const [offset, years] = { early: [0, 4], mid: [4, 3], late: [7, 3] }[mention.decadePart];
    const first = from.getUTCFullYear() + offset!;
    [from, to] = [utc(first), utc(first + years!)];
  }
  const year = mention.granularity === 'year' ? from.getUTCFullYear() : null;
  switch (governor) {
    case 'since':
    case 'from':
      return { from, to: null };
    case 'after':
    case 'following':
      return { from: to, to: null };
    case 'until':
    case 'till':
    case 'up to':
    case 'by':
    case 'by the end of':
      return { from: null, to };
    case 'before':
    case 'prior to':
      return { from: null, to: from };
    case 'at the end of':
      return year === null ? { from, to } : partOfYear(year, 'late');
    case 'at the start of':
    case 'at the beginning of':
      return year === null ? { from, to } : partOfYear(year, 'early');
    default:
      return { from, to };
  }
}

const AND_LINK = /^\s*and\s*(?:the\s+)?$/i;
const TO_LINK = /^\s*,?\s*(?:to|until|till|through|-|–|—)\s*(?:the\s+)?$/i;
const UNTIL_WORDS = new Set(['until', 'till', 'up to']);

/** Whether two mentions are the ends of one range, given the first one's governor. */
function rangeLink(sentence: string, first: Mention, second: Mention, firstGovernor: string | null, secondGovernor: Governor): boolean {
  if (first.through || second.through) return false;
  const between = sentence.slice(first.end, secondGovernor && secondGovernor.start >= first.end ? secondGovernor.start : second.start);
  if (firstGovernor === 'between') return AND_LINK.test(between);
  if (firstGovernor === 'from' && secondGovernor && UNTIL_WORDS.has(secondGovernor.word)) return /^\s*,?\s*$/.test(between);
  if (firstGovernor !== null && firstGovernor !== 'from') return false;
  // Two full dates side by side are a life span whose dash the source lost ("(March 7, 1912 October 18, 2003)").
  if (first.granularity === 'day' && second.granularity === 'day' && /^\s*$/.test(between)) return true;
  return TO_LINK.test(between);
}

function readSentence(sentence: string, anchor: Anchor | null): { times: EventTime[]; anchor: Anchor | null } {
  if (!MAY_STATE_TIME.test(sentence)) return { times: [], anchor };
  const mentions: Mention[] = [];
  for (const mention of findMentions(sentence)) {
    const previous = mentions.at(-1);
    // "September 20 of that year" is one date.
    if (mention.relative && previous?.yearImplied && OF_THAT_YEAR.test(sentence.slice(previous.end, mention.end)))
      mentions[mentions.length - 1] = { ...previous, end: mention.end };
    else mentions.push(mention);
  }
  const { placed, anchor: next } = place(mentions, anchor);
  const governors = placed.map((mention) => governorOf(sentence, mention));
  const times: EventTime[] = [];
  const add = (start: number, end: number, span: { from: Date | null; to: Date | null }): void => {
    if (span.from && span.to && span.from >= span.to) return;
    times.push({ from: span.from, to: span.to, text: sentence.slice(start, end), start, end });
  };
  for (let i = 0; i < placed.length; i++) {
    const mention = placed[i]!;
    const governor = governors[i]!;
    if (namesSomething(sentence, mention, governor)) continue;
    const start = governor?.start ?? mention.start;
    const following = placed[i + 1];
    if (following && rangeLink(sentence, mention, following, governor?.word ?? null, governors[i + 1]!)) {
      add(start, following.end, { from: interval(mention, null).from, to: interval(following, null).to });
      i += 1;
      continue;
    }
    const openEnd = OPEN_END.exec(sentence.slice(mention.end));
    if (openEnd) {
      add(start, mention.end + openEnd[0].length, { from: interval(mention, null).from, to: null });
      continue;
    }
    const word = governor?.word ?? null;
    // "from 1989 and 1990" names two years; "from 2005" alone starts an open period.
    const listed = word === 'from' && /^\s*(?:and|or)\b/i.test(sentence.slice(mention.end));
    add(start, mention.end, interval(mention, listed ? null : word));
  }
  return { times, anchor: next };
}

/** The event times of each sentence of one paragraph, in order; relative ones are placed from earlier sentences. */
export function readParagraphEventTimes(sentences: readonly string[]): EventTime[][] {
  let anchor: Anchor | null = null;
  return sentences.map((sentence) => {
    const read = readSentence(sentence, anchor);
    anchor = read.anchor;
    return read.times;
  });
}

/** The event times of one sentence read on its own. */
export function readEventTimes(sentence: string): EventTime[] {
  return readSentence(sentence, null).times;
}
