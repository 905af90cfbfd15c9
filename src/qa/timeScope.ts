/**
 * The time a question asks about, read from its own words: "in July 2024", "in 2023", "between
 * Dec 1933 and Dec 1935", "before 2020", "after the 2022 election year", "as of last year",
 * "two years ago", "currently". chrono-node finds dates, months and relative expressions
 * (relative to the question's asOf); years and decades and the prepositions that make a date a
 * scope ("before", "since", "between … and …") are read here. A year that only names an event
 * ("the 2022 World Cup") is not a scope: the answer does not depend on when it is asked.
 */
import * as chrono from 'chrono-node';
import { earlierCue } from './question.js';

export enum TimeScopeKind {
  /** One instant: "on 4 December 2024", "two years ago", "as of 2023" (its end). */
  AT = 'AT',
  /** A period: "in July 2024", "in 2023", "between 1990 and 1995". The answer that held longest in it is the main one. */
  DURING = 'DURING',
  /** Up to the start of a period: "before 2020". The last answer before it. */
  BEFORE = 'BEFORE',
  /** From the end of a period to asOf: "after 2022". The first answer after it is the main one. */
  AFTER = 'AFTER',
  /** From the start of a period to asOf: "since 2020". The latest answer is the main one. */
  SINCE = 'SINCE',
  /** "now", "currently", "at present": asOf itself. */
  CURRENT = 'CURRENT',
  /** "the previous", "before that", "former": the value before the one that holds at asOf. */
  PREVIOUS = 'PREVIOUS',
}

export interface TimeScope {
  kind: TimeScopeKind;
  /** The words read, as written in the question. */
  text: string;
  /** Start of the scope (inclusive); null when open (BEFORE). */
  from: Date | null;
  /** End of the scope (exclusive); null when open (AFTER, SINCE: up to asOf). */
  to: Date | null;
}

interface Period {
  from: Date;
  to: Date;
  start: number;
  end: number;
  /** An instant rather than a period ("now", "two years ago"). */
  instant: boolean;
  /** "now", "today": the question's own asOf. */
  present: boolean;
}

const utc = (year: number, month = 0, day = 1): Date => new Date(Date.UTC(year, month, day));
const CURRENT_WORDS = /\b(currently|at present|presently|nowadays|these days|right now|at the moment|as of (now|today)|now|today)\b/i;

/** Years ("2023", "1990s", "the year 2022") and chrono's dates, months and relative expressions, in order. */
function periods(question: string, asOf: Date): Period[] {
  const found: Period[] = [];
  const overlaps = (start: number, end: number): boolean => found.some((p) => start < p.end && end > p.start);
  for (const result of chrono.parse(question, { instant: asOf, timezone: 'UTC' })) {
    const known = (component: chrono.Component): boolean => result.start.isCertain(component);
    const start = result.index;
    const end = start + result.text.length;
    const present = /^(now|today|right now)$/i.test(result.text.trim());
    // A bare weekday or time of day ("Sunday", "at 5") is not a time the question is scoped to.
    if (!present && !known('year') && !known('month')) continue;
    const date = result.start.date();
    const year = date.getUTCFullYear();
    let period: { from: Date; to: Date; instant: boolean };
    if (present || /\bago\b/i.test(result.text)) period = { from: date, to: date, instant: true };
    else if (known('day'))
      period = { from: utc(year, date.getUTCMonth(), date.getUTCDate()), to: utc(year, date.getUTCMonth(), date.getUTCDate() + 1), instant: false };
    else if (known('month')) {
      // "in May" without a year: the last May up to asOf.
      const shift = !known('year') && utc(year, date.getUTCMonth()) > asOf ? 1 : 0;
      period = { from: utc(year - shift, date.getUTCMonth()), to: utc(year - shift, date.getUTCMonth() + 1), instant: false };
    } else period = { from: utc(year), to: utc(year + 1), instant: false };
    found.push({ ...period, start, end, present });
  }
  // Years, decades ("the 1990s") and seasons ("2023–24"), with a part of the year ("late 2024") and a following "… year".
  const YEARS = /\b(?:(early|mid|late)[\s-]+)?(1[0-9]{3}|20[0-9]{2})(?:(s)\b|[–/-](\d{2}|\d{4})\b)?(?:\s+(?:\w+\s+)?(?:year|season))?(?![\w-])/gi;
  for (const match of question.matchAll(YEARS)) {
    const start = match.index!;
    const end = start + match[0].length;
    if (overlaps(start, end)) continue;
    const year = Number(match[2]);
    const part = match[1]?.toLowerCase();
    const last = match[4] ? (match[4].length === 2 ? Math.floor(year / 100) * 100 + Number(match[4]) : Number(match[4])) : year;
    let from = utc(year);
    let to = match[3] ? utc(year + 10) : utc(Math.max(year, last) + 1);
    if (part && !match[3] && !match[4])
      [from, to] = part === 'early' ? [utc(year, 0), utc(year, 4)] : part === 'mid' ? [utc(year, 4), utc(year, 8)] : [utc(year, 8), utc(year + 1)];
    found.push({ from, to, start, end, instant: false, present: false });
  }
  return found.sort((a, b) => a.start - b.start);
}

/** The words right before a date that make it a scope, with at most "the" and two other words in between ("after the 2022 election year"). */
const GOVERNOR =
  /\b(between|from|before|prior to|until|till|up to|by|after|following|since|as of|as at|in|during|throughout|on|at the (?:end|start|beginning) of|by the end of|at|around)\s+(?:the\s+)?(?:(?:year|month)\s+)?$/i;
const RANGE_LINK = /^\s*(?:and|to|until|till|through|-|–)\s*(?:the\s+)?$/i;

/** The time scope of a question, or null when it names none (it is then asked as of asOf). */
export function readTimeScope(question: string, asOf: Date): TimeScope | null {
  const found = periods(question, asOf);
  for (let i = 0; i < found.length; i++) {
    const period = found[i]!;
    const before = question.slice(Math.max(0, period.start - 40), period.start);
    const governor = GOVERNOR.exec(before)?.[1]?.toLowerCase() ?? null;
    const text = (from: number, to: number): string => question.slice(from, to).trim();
    const next = found[i + 1];
    if ((governor === 'between' || governor === 'from') && next && RANGE_LINK.test(question.slice(period.end, next.start))) {
      const start = period.start - (GOVERNOR.exec(before)?.[0].length ?? 0);
      return { kind: TimeScopeKind.DURING, text: text(start, next.end), from: period.from, to: next.to };
    }
    const start = period.start - (governor ? GOVERNOR.exec(before)![0].length : 0);
    const words = text(start, period.end);
    if (period.present) return { kind: TimeScopeKind.CURRENT, text: words, from: asOf, to: asOf };
    switch (governor) {
      case 'before':
      case 'prior to':
      case 'until':
      case 'till':
      case 'up to':
        return { kind: TimeScopeKind.BEFORE, text: words, from: null, to: period.from };
      case 'after':
      case 'following':
        return { kind: TimeScopeKind.AFTER, text: words, from: period.to, to: null };
      case 'since':
        return { kind: TimeScopeKind.SINCE, text: words, from: period.from, to: null };
      case 'as of':
      case 'as at':
      case 'by':
      case 'by the end of':
      case 'at the end of':
        return { kind: TimeScopeKind.AT, text: words, from: new Date(period.to.getTime() - 1), to: period.to };
      case 'at the start of':
      case 'at the beginning of':
        return { kind: TimeScopeKind.AT, text: words, from: period.from, to: new Date(period.from.getTime() + 1) };
      case null:
        // An ungoverned year names an event ("the 2022 World Cup"); chrono's own phrases ("last year", "two years ago") are scopes.
        if (/^(early|mid|late)?[\s-]*\d{4}/i.test(words)) continue;
        break;
    }
    if (period.instant) return { kind: TimeScopeKind.AT, text: words, from: period.from, to: new Date(period.from.getTime() + 1) };
    return { kind: TimeScopeKind.DURING, text: words, from: period.from, to: period.to };
  }
  const current = CURRENT_WORDS.exec(question);
  if (current) return { kind: TimeScopeKind.CURRENT, text: current[0], from: asOf, to: asOf };
  const earlier = earlierCue(question);
  return earlier ? { kind: TimeScopeKind.PREVIOUS, text: earlier, from: null, to: asOf } : null;
}

/** The instants at which to answer a scoped question: where the store's versions can differ inside the scope, up to asOf. */
export interface ScopeInstants {
  instants: Date[];
  /** Which instant's answer is the main one: the longest-held (DURING), the first (AFTER) or the last. */
  main: 'longest' | 'first' | 'last';
  /** Why the scope could not be answered as asked, when it could not (it lies after asOf or before the first snapshot). */
  note: string | null;
}

/** At most this many instants per question: a scope spanning more snapshots is sampled evenly, keeping its first and last. */
export const MAX_SCOPE_INSTANTS = 8;

/**
 * The instants to answer at: the scope's start and every snapshot date inside it (versions
 * change only there), clipped to [first snapshot, asOf].
 */
export function scopeInstants(scope: TimeScope | null, asOf: Date, snapshotDates: readonly Date[]): ScopeInstants {
  if (scope === null || scope.kind === TimeScopeKind.CURRENT || scope.kind === TimeScopeKind.PREVIOUS) return { instants: [asOf], main: 'last', note: null };
  const first = snapshotDates[0]!;
  const day = (date: Date): string => date.toISOString().slice(0, 10);
  const lastMoment = (to: Date): Date => new Date(to.getTime() - 1);
  const from = scope.from ?? first;
  const to = scope.to === null ? asOf : lastMoment(scope.to);
  if (from.getTime() > asOf.getTime()) {
    return { instants: [asOf], main: 'last', note: `asks about ${scope.text}, after asOf ${day(asOf)}: answered as of asOf` };
  }
  if (to.getTime() < first.getTime())
    return { instants: [], main: 'last', note: `asks about ${scope.text}, before the first snapshot (${day(first)}): nothing is known then` };
  const start = new Date(Math.max(from.getTime(), first.getTime()));
  const end = new Date(Math.min(to.getTime(), asOf.getTime()));
  if (scope.kind === TimeScopeKind.AT || scope.kind === TimeScopeKind.BEFORE) return { instants: [end], main: 'last', note: null };
  let instants = [start, ...snapshotDates.filter((date) => date > start && date <= end)];
  if (instants.length > MAX_SCOPE_INSTANTS) {
    const step = (instants.length - 1) / (MAX_SCOPE_INSTANTS - 1);
    instants = Array.from({ length: MAX_SCOPE_INSTANTS }, (_, i) => instants[Math.round(i * step)]!);
  }
  return { instants, main: scope.kind === TimeScopeKind.AFTER ? 'first' : scope.kind === TimeScopeKind.SINCE ? 'last' : 'longest', note: null };
}
