/**
 * The times a sentence of an article mentions, before anything is decided about what they mean
 * for its claim (text/eventTimes.ts decides): dates and months (chrono-node), centuries, years
 * with an era ("60 BC", "AD 208"), three-digit years after a preposition ("in 874"), seasons and
 * halves of a year, the years, spans and decades every reader shares (text/timeExpressions.ts),
 * and relative expressions ("two years later", "the following year", "that same year").
 */
import { chronoPeriods, utc, yearPeriods, type Granularity, type PartOfPeriod, type StatedPeriod } from './timeExpressions.js';

/** How a relative expression moves from the time it is anchored on. */
export interface RelativeStep {
  unit: 'year' | 'month';
  /** How many units later (negative: earlier). */
  count: number;
}

export interface Mention {
  from: Date;
  to: Date;
  start: number;
  end: number;
  granularity: Granularity | 'century';
  /** A date whose year the words leave out ("on 28 July", "September 20 of that year"): it is taken from the paragraph. */
  yearImplied: boolean;
  decadePart: PartOfPeriod | null;
  /** The end of a range read as one expression ("26 July to 11 August 2024", "139 to 125 BC"). */
  through: Mention | null;
  /** For a relative expression, its step from the anchor; from and to are set once the anchor is known. */
  relative: RelativeStep | null;
}

const MONTH_NAMES =
  /\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b|\b\d{4}-\d{2}-\d{2}\b/g;
const HAS_MONTH_NAME = new RegExp(MONTH_NAMES.source);
/** Words around a month name that chrono needs to read its date ("from January 6, 1975, to June 30, 1989"). */
const DATE_WINDOW_CHARS = 25;
/** chrono reads years of dates against this instant only to take them apart again: an implied year comes from the paragraph. */
const CHRONO_REFERENCE = utc(2000, 6, 1);

const ORDINALS = [
  'first',
  'second',
  'third',
  'fourth',
  'fifth',
  'sixth',
  'seventh',
  'eighth',
  'ninth',
  'tenth',
  'eleventh',
  'twelfth',
  'thirteenth',
  'fourteenth',
  'fifteenth',
  'sixteenth',
  'seventeenth',
  'eighteenth',
  'nineteenth',
  'twentieth',
  'twenty-first',
];
const CENTURY = new RegExp(
  `\\b(?:the\\s+)?(?:(early|mid|late)[\\s-]+)?(?:(\\d{1,2})(?:st|nd|rd|th)|(${ORDINALS.join('|')}))[\\s-]+century(?:[\\s-]+(BC|BCE|AD|CE)\\b)?`,
  'gi',
);
const ERA_RANGE = /\b(\d{1,4})\s*(?:–|-|to)\s*(\d{1,4})\s*(BC|BCE|AD|CE)\b/g;
const ERA_YEAR = /\b(?:(AD|CE)\s+(\d{1,4})|(\d{1,4})\s*(BC|BCE|AD|CE))\b/g;
/** A three-digit year after a preposition, ended by punctuation or a word that cannot follow a count ("in 874 and", but not "in 300 matches"). */
const SHORT_YEAR =
  /\b(?:in|from|until|till|to|by|since|after|before|around|c\.|circa)\s+(\d{3})(?=$|[,.;:)]|\s+(?:and|or|when|where|until|to|while|after|before|at|in|on)\b)/gi;
const SEASON_OF_YEAR = /\b(?:the\s+)?(spring|summer|autumn|fall)\s+(?:of\s+)?(1[0-9]{3}|20[0-9]{2})\b/gi;
const HALF_OF_YEAR = /\b(?:the\s+)?(first|second)\s+half\s+of\s+(1[0-9]{3}|20[0-9]{2})\b/gi;
const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
};
const RELATIVE_COUNT =
  /\b(an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})\s+(years?|decades?|months?)\s+(later|afterwards?|earlier|ago|previously)\b/gi;
const RELATIVE_WORDS: Array<[RegExp, RelativeStep]> = [
  [/\b(?:(?:later|earlier)\s+(?:in\s+)?that\s+year|(?:in\s+)?(?:that|the)\s+same\s+year|(?:in\s+)?that\s+year)\b/gi, { unit: 'year', count: 0 }],
  // A season ("the following season") is a sports year: its reading is the year after.
  [/\b(?:the\s+(?:following|next|subsequent)\s+(?:year|season)|the\s+(?:year|season)\s+after(?=\s*[,.;]|$))/gi, { unit: 'year', count: 1 }],
  [/\b(?:the\s+(?:previous|preceding)\s+year|the\s+year\s+before(?=\s*[,.;]|$))/gi, { unit: 'year', count: -1 }],
  [/\bthe\s+(?:following|next)\s+month\b/gi, { unit: 'month', count: 1 }],
  [/\b(?:that|the)\s+same\s+month\b/gi, { unit: 'month', count: 0 }],
];
/** Something before a number that makes it a count, an amount or a label, not a year. */
const NOT_A_YEAR_BEFORE = /(?:\bNos?\.|\bnumbers?|\bnumbered|#|[$£€¥]|\bpp?\.|\bpages?)\s*$|[\d.,]$/i;
/** Something after a number that makes it a count or a measure. */
const NOT_A_YEAR_AFTER =
  /^(?:[.,]\d|\s*(?:%|percent\b|m\b|km\b|ft\b|feet\b|metres\b|meters\b|miles\b|people\b|persons\b|inhabitants\b|residents\b|votes\b|voters\b|members\b|soldiers\b|troops\b|men\b|women\b|students\b|employees\b|workers\b|copies\b|units\b|tons\b|tonnes\b|kg\b|goals\b|points\b|runs\b|games\b|matches\b|seats\b|households\b|families\b|acres\b|hectares\b|words\b|episodes\b|cars\b|vehicles\b|aircraft\b|ships\b|prisoners\b|casualties\b|deaths\b))/i;

const base = { yearImplied: false, decadePart: null, through: null, relative: null } as const;

/** A year of an era: 60 BC is year -59 of the proleptic Gregorian calendar (1 BC is year 0). */
function eraYear(year: number, era: string | undefined): number {
  return era && /^BC/i.test(era) ? 1 - year : year;
}

function fromPeriod(period: StatedPeriod): Mention {
  return {
    from: period.from,
    to: period.to,
    start: period.start,
    end: period.end,
    granularity: period.granularity,
    yearImplied: period.yearImplied,
    decadePart: period.decadePart,
    through: period.through && fromPeriod(period.through),
    relative: null,
  };
}

/** Word-bounded windows around each month name, merged, so chrono reads a few dozen characters instead of the whole sentence. */
function dateWindows(sentence: string): Array<{ start: number; end: number }> {
  const windows: Array<{ start: number; end: number }> = [];
  for (const match of sentence.matchAll(MONTH_NAMES)) {
    let start = Math.max(0, match.index - DATE_WINDOW_CHARS);
    let end = Math.min(sentence.length, match.index + match[0].length + DATE_WINDOW_CHARS);
    while (start > 0 && /\S/.test(sentence[start - 1]!)) start -= 1;
    while (end < sentence.length && /\S/.test(sentence[end]!)) end += 1;
    const last = windows.at(-1);
    if (last && start <= last.end) last.end = Math.max(last.end, end);
    else windows.push({ start, end });
  }
  return windows;
}

/**
 * Dates and months with a month's name in them; numeric forms ("3/4", "2015.8.29") are too often
 * something else. chrono skips a date right before another ("(March 7, 1912 October 18, 2003)"),
 * so what it left of a window is read again.
 */
function dateMentions(sentence: string): Mention[] {
  const found: Mention[] = [];
  const read = (start: number, end: number): StatedPeriod[] => {
    const periods = chronoPeriods(sentence.slice(start, end), CHRONO_REFERENCE).filter(
      (period) => !period.instant && period.granularity !== 'year' && HAS_MONTH_NAME.test(sentence.slice(start + period.start, start + period.end)),
    );
    const shift = (period: StatedPeriod): StatedPeriod => ({ ...period, start: period.start + start, end: period.end + start });
    return periods.map((period) => ({ ...shift(period), through: period.through && shift(period.through) }));
  };
  for (const window of dateWindows(sentence)) {
    const periods = read(window.start, window.end);
    const first = periods[0];
    if (first && HAS_MONTH_NAME.test(sentence.slice(window.start, first.start))) periods.unshift(...read(window.start, first.start));
    found.push(...periods.map(fromPeriod));
  }
  return found;
}

function centuryMentions(sentence: string): Mention[] {
  return [...sentence.matchAll(CENTURY)].map((match) => {
    const ordinal = match[2] ? Number(match[2]) : ORDINALS.indexOf(match[3]!.toLowerCase()) + 1;
    const bc = /^BC/i.test(match[4] ?? '');
    // The 19th century is 1800–1899 here, as it is commonly written about; the 2nd century BC, 200–101 BC.
    const first = bc ? 1 - ordinal * 100 : (ordinal - 1) * 100;
    const part = match[1]?.toLowerCase();
    const [from, to] =
      part === 'early' ? [first, first + 33] : part === 'mid' ? [first + 33, first + 67] : part === 'late' ? [first + 67, first + 100] : [first, first + 100];
    return { ...base, from: utc(from), to: utc(to), start: match.index, end: match.index + match[0].length, granularity: 'century' as const };
  });
}

function eraMentions(sentence: string): Mention[] {
  const ranges = [...sentence.matchAll(ERA_RANGE)].map((match) => {
    const [first, last] = [eraYear(Number(match[1]), match[3]), eraYear(Number(match[2]), match[3])];
    const end = match.index + match[0].length;
    const through = { ...base, from: utc(last), to: utc(last + 1), start: end - match[0].length, end, granularity: 'year' as const };
    return { ...base, from: utc(first), to: utc(first + 1), start: match.index, end, granularity: 'year' as const, through };
  });
  const years = [...sentence.matchAll(ERA_YEAR)].map((match) => {
    const year = eraYear(Number(match[2] ?? match[3]), match[1] ?? match[4]);
    return { ...base, from: utc(year), to: utc(year + 1), start: match.index, end: match.index + match[0].length, granularity: 'year' as const };
  });
  return [...ranges, ...years];
}

function partOfYearMentions(sentence: string): Mention[] {
  const seasons = [...sentence.matchAll(SEASON_OF_YEAR)].map((match) => {
    const first = { spring: 2, summer: 5, autumn: 8, fall: 8 }[match[1]!.toLowerCase() as 'spring'];
    const year = Number(match[2]);
    return { ...base, from: utc(year, first), to: utc(year, first + 3), start: match.index, end: match.index + match[0].length, granularity: 'month' as const };
  });
  const halves = [...sentence.matchAll(HALF_OF_YEAR)].map((match) => {
    const first = match[1]!.toLowerCase() === 'first' ? 0 : 6;
    const year = Number(match[2]);
    return { ...base, from: utc(year, first), to: utc(year, first + 6), start: match.index, end: match.index + match[0].length, granularity: 'month' as const };
  });
  return [...seasons, ...halves];
}

function shortYearMentions(sentence: string): Mention[] {
  return [...sentence.matchAll(SHORT_YEAR)].map((match) => {
    const start = match.index + match[0].length - match[1]!.length;
    const year = Number(match[1]);
    return { ...base, from: utc(year), to: utc(year + 1), start, end: start + match[1]!.length, granularity: 'year' as const };
  });
}

/** Years, spans and decades, less the numbers that count, measure or label something. */
function yearMentions(sentence: string, taken: readonly Mention[]): Mention[] {
  return yearPeriods(sentence, taken)
    .filter(
      (period) => !NOT_A_YEAR_BEFORE.test(sentence.slice(Math.max(0, period.start - 12), period.start)) && !NOT_A_YEAR_AFTER.test(sentence.slice(period.end)),
    )
    .map(fromPeriod);
}

function relativeMentions(sentence: string): Mention[] {
  const found: Mention[] = [];
  const add = (match: RegExpMatchArray, relative: RelativeStep): void => {
    found.push({ ...base, from: utc(0), to: utc(0), start: match.index!, end: match.index! + match[0].length, granularity: relative.unit, relative });
  };
  for (const match of sentence.matchAll(RELATIVE_COUNT)) {
    const count = NUMBER_WORDS[match[1]!.toLowerCase()] ?? Number(match[1]);
    const unit = match[2]!.toLowerCase();
    const sign = /^(later|after)/i.test(match[3]!) ? 1 : -1;
    add(match, { unit: unit.startsWith('month') ? 'month' : 'year', count: sign * count * (unit.startsWith('decade') ? 10 : 1) });
  }
  for (const [pattern, step] of RELATIVE_WORDS) for (const match of sentence.matchAll(pattern)) add(match, step);
  return found;
}

/** Every time a sentence mentions, in text order, none overlapping another: the finders earlier in the list win. */
export function findMentions(sentence: string): Mention[] {
  const found: Mention[] = [];
  const keep = (mentions: readonly Mention[]): void => {
    for (const mention of mentions) if (!found.some((other) => mention.start < other.end && mention.end > other.start)) found.push(mention);
  };
  // Each finder runs only where a cheap look finds what it needs: this runs for every sentence ingested.
  if (HAS_MONTH_NAME.test(sentence)) keep(dateMentions(sentence));
  if (/centur/i.test(sentence)) keep(centuryMentions(sentence));
  if (/\b(?:BCE?|AD|CE)\b/.test(sentence)) keep(eraMentions(sentence));
  if (/spring|summer|autumn|fall|half/i.test(sentence)) keep(partOfYearMentions(sentence));
  keep(yearMentions(sentence, found));
  if (/\b\d{3}\b/.test(sentence)) keep(shortYearMentions(sentence));
  if (/year|month|decade|season/i.test(sentence)) keep(relativeMentions(sentence));
  return found.sort((a, b) => a.start - b.start);
}
