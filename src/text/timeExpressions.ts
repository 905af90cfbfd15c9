/**
 * Times as English text writes them, read one way for questions (qa/timeScope.ts) and for the text
 * of articles (text/eventTimes.ts). chrono-node finds dates, months and relative expressions;
 * years, spans of years ("2006–2009", "2023–24", "the 2006 season"), decades ("the 1990s") and
 * parts of a year ("late 2024") are read here, since chrono reads none of them.
 */
import * as chrono from 'chrono-node';

/** How fine a stated time is: the unit its half-open interval covers. */
export type Granularity = 'instant' | 'day' | 'week' | 'month' | 'year' | 'years' | 'decade';

export type PartOfPeriod = 'early' | 'mid' | 'late';

export interface StatedPeriod {
  /** Start of the period (inclusive). */
  from: Date;
  /** End of the period (exclusive). */
  to: Date;
  /** Offsets of the words read. */
  start: number;
  end: number;
  granularity: Granularity;
  /** An instant rather than a period ("now", "two years ago"). */
  instant: boolean;
  /** "now", "today": the reference instant itself. */
  present: boolean;
  /** The words name no year ("in May", "on 28 July"): chrono took it from the reference instant. */
  yearImplied: boolean;
  /** "early", "mid" or "late" before a decade ("the late 1990s"): from and to are the whole decade's. */
  decadePart: PartOfPeriod | null;
  /** The end of a range chrono read as one expression ("26 July to 11 August 2024"). */
  through: StatedPeriod | null;
}

/** Midnight UTC of a day; any year, 0 to 99 included (Date.UTC would read those as 1900 to 1999). Months and days past their end roll over. */
export function utc(year: number, month = 0, day = 1): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  return date;
}

/** Months of a part of a year: January–April, May–August, September–December. */
export function partOfYear(year: number, part: PartOfPeriod): { from: Date; to: Date } {
  const first = { early: 0, mid: 4, late: 8 }[part];
  return { from: utc(year, first), to: utc(year, first + 4) };
}

/**
 * A week named relative to the reference ("this week", "last week", "the past week"), which chrono
 * reads as one day of it or as nothing. A calendar week starts on Monday; "the past week" is the
 * seven days up to and including the reference's.
 */
const RELATIVE_WEEK = /^(?:the\s+)?(this|last|next|past)\s+week$/i;

function relativeWeek(text: string, reference: Date, start: number): StatedPeriod | null {
  const which = RELATIVE_WEEK.exec(text.trim())?.[1]?.toLowerCase();
  if (!which) return null;
  const day = utc(reference.getUTCFullYear(), reference.getUTCMonth(), reference.getUTCDate());
  const sinceMonday = (day.getUTCDay() + 6) % 7;
  const first = which === 'past' ? -6 : -sinceMonday + { this: 0, last: -7, next: 7 }[which as 'this' | 'last' | 'next'];
  const from = utc(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + first);
  const to = utc(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate() + 7);
  return {
    from,
    to,
    start,
    end: start + text.length,
    granularity: 'week',
    instant: false,
    present: false,
    yearImplied: false,
    decadePart: null,
    through: null,
  };
}

/** A time chrono read as one period, at the finest unit the words state. */
function chronoPeriod(component: chrono.ParsedComponents, reference: Date, text: string, start: number): StatedPeriod | null {
  const week = relativeWeek(text, reference, start);
  if (week) return week;
  const known = (unit: chrono.Component): boolean => component.isCertain(unit);
  const present = /^(now|today|right now)$/i.test(text.trim());
  // A bare weekday or time of day ("Sunday", "at 5") is not a period.
  if (!present && !known('year') && !known('month')) return null;
  const date = component.date();
  const year = date.getUTCFullYear();
  const base = { start, end: start + text.length, present, yearImplied: !known('year'), decadePart: null, through: null };
  if (present || /\bago\b/i.test(text)) return { ...base, from: date, to: date, granularity: 'instant', instant: true };
  if (known('day')) {
    const day = utc(year, date.getUTCMonth(), date.getUTCDate());
    return { ...base, from: day, to: utc(year, date.getUTCMonth(), date.getUTCDate() + 1), granularity: 'day', instant: false };
  }
  if (known('month')) {
    // "in May" without a year: the last May up to the reference instant.
    const shift = !known('year') && utc(year, date.getUTCMonth()) > reference ? 1 : 0;
    return { ...base, from: utc(year - shift, date.getUTCMonth()), to: utc(year - shift, date.getUTCMonth() + 1), granularity: 'month', instant: false };
  }
  return { ...base, from: utc(year), to: utc(year + 1), granularity: 'year', instant: false };
}

/** Dates, months and relative expressions that chrono finds, read against `reference` ("last year"), with the end of a range. */
export function chronoPeriods(text: string, reference: Date): StatedPeriod[] {
  const found: StatedPeriod[] = [];
  for (const result of chrono.parse(text, { instant: reference, timezone: 'UTC' })) {
    // "the last week of December 2023" is a week of that month, not the one before the reference.
    if (RELATIVE_WEEK.test(result.text.trim()) && /^\s+of\b/i.test(text.slice(result.index + result.text.length))) continue;
    const period = chronoPeriod(result.start, reference, result.text, result.index);
    if (!period) continue;
    const through = result.end && chronoPeriod(result.end, reference, result.text, result.index);
    found.push({ ...period, through: through && !through.instant ? through : null });
  }
  return found;
}

/**
 * Years, decades ("the 1990s", "mid-1980s") and spans of years ("2023–24", "2006–2009", "the 2006
 * season", "the 2015-16 financial year"), with a part of the year ("late 2024").
 */
const YEARS = /\b(?:(early|mid|late)[\s-]+)?(1[0-9]{3}|20[0-9]{2})(?:(s)\b|[–/-](\d{2}|\d{4})\b)?(\s+(?:\w+\s+)?(?:year|season))?(?![\w-])/gi;

/** The years, decades and spans of years of a text not inside `taken` (ranges of offsets already read). */
export function yearPeriods(text: string, taken: ReadonlyArray<{ start: number; end: number }> = []): StatedPeriod[] {
  const found: StatedPeriod[] = [];
  for (const match of text.matchAll(YEARS)) {
    const start = match.index;
    const end = start + match[0].length;
    if (taken.some((period) => start < period.end && end > period.start)) continue;
    const year = Number(match[2]);
    const part = (match[1]?.toLowerCase() ?? null) as PartOfPeriod | null;
    const decade = match[3] !== undefined;
    let last = year;
    if (match[4]) {
      // "2023–24" ends in the same century, "1999–00" in the next.
      last = match[4].length === 4 ? Number(match[4]) : Math.floor(year / 100) * 100 + Number(match[4]);
      if (last < year && match[4].length === 2) last += 100;
    }
    const { from, to } =
      part && !decade && !match[4] ? partOfYear(year, part) : { from: utc(year), to: decade ? utc(year + 10) : utc(Math.max(year, last) + 1) };
    const granularity: Granularity = decade ? 'decade' : match[4] || match[5] ? 'years' : part ? 'month' : 'year';
    // Written out rather than spread: this runs for every sentence ingested.
    found.push({ from, to, start, end, granularity, instant: false, present: false, yearImplied: false, decadePart: decade ? part : null, through: null });
  }
  return found;
}

/** chrono's periods and the years, decades and spans read here, in text order. */
export function statedPeriods(text: string, reference: Date): StatedPeriod[] {
  const found = chronoPeriods(text, reference);
  return [...found, ...yearPeriods(text, found)].sort((a, b) => a.start - b.start);
}

/**
 * The words right before a time that make it a scope or an interval, with at most "the" and
 * "year" or "month" in between ("after the 2022 election year", "since the 1980s").
 */
export const TIME_GOVERNOR =
  /\b(between|from|before|prior to|until|till|up to|by|after|following|since|as of|as at|in|during|throughout|on|at the (?:end|start|beginning) of|by the end of|at|around)\s+(?:the\s+)?(?:(?:year|month)s?\s+)?$/i;

/** What links the two ends of a range ("between 1990 and 1995", "from 2004 to 2005"). */
export const RANGE_LINK = /^\s*(?:and|to|until|till|through|-|–)\s*(?:the\s+)?$/i;
