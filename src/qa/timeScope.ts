/**
 * The time a question asks about, read from its own words: "in July 2024", "in 2023", "between
 * Dec 1933 and Dec 1935", "before 2020", "after the 2022 election year", "as of last year",
 * "two years ago", "currently". The times themselves are read as the text of articles is
 * (text/timeExpressions.ts: relative ones against the question's asOf); what makes a time a scope
 * ("before", "since", "between … and …") is decided here. A year that only names an event
 * ("the 2022 World Cup") is not a scope: the answer does not depend on when it is asked.
 */
import { RANGE_LINK, statedPeriods, TIME_GOVERNOR as GOVERNOR } from '../text/timeExpressions.js';
import { earlierCue, eventClause, expectedAnswerType, namedNeighbour, ordinalOf } from './question.js';

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
  /** "the previous", "before that", "former": the value before the one that holds at asOf, or before a named one ("before Donald Tusk"). */
  PREVIOUS = 'PREVIOUS',
  /** "after Rishi Sunak", "who succeeded Élisabeth Borne": the value after a named one. */
  NEXT = 'NEXT',
  /** "when Paris hosted the Olympics": the time the text gives for another event, answered as a period (DURING). */
  WHEN = 'WHEN',
  /** "the first prime minister", "which club did he manage first": the earliest value the fact or the text gives. */
  FIRST = 'FIRST',
  /** "Liverpool's last manager": the latest value up to asOf. */
  LAST = 'LAST',
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

/** What may stand before a range that makes it the period asked about. */
const DURING_GOVERNORS = new Set(['between', 'from', 'in', 'during', 'throughout']);

/**
 * Words that make a time part of a description of the subject ("the chemist born February 13,
 * 1859", "the institute founded by Hans Elsässer in 1969"), not the time asked about, when another
 * time follows ("… what job did she hold from 1881 to 1882?"). The description runs to a comma.
 */
const DESCRIBING = /\b(?:born|founded|established|formed|created|built|constructed|opened|inaugurated|launched|incorporated)\b[^,;?]{0,40}$/i;

const CURRENT_WORDS = /\b(currently|at present|presently|nowadays|these days|right now|at the moment|as of (now|today)|now|today)\b/i;

/** The time scope of a question, or null when it names none (it is then asked as of asOf). */
export function readTimeScope(question: string, asOf: Date): TimeScope | null {
  // Two numbers across a slash with no year ("Escadron de Chasse 1/2", "a 3/4 majority") are a name or a share, not a date.
  const found = statedPeriods(question, asOf).filter((period) => !/^\d{1,2}\/\d{1,2}$/.test(question.slice(period.start, period.end).trim()));
  const wordsBefore = (start: number): string => question.slice(Math.max(0, start - 40), start);
  const describing = found.map((period) => DESCRIBING.test(wordsBefore(period.start)));
  for (let i = 0; i < found.length; i++) {
    const period = found[i]!;
    if (describing[i] && describing.slice(i + 1).includes(false)) continue;
    const before = wordsBefore(period.start);
    const governor = GOVERNOR.exec(before)?.[1]?.toLowerCase() ?? null;
    const text = (from: number, to: number): string => question.slice(from, to).trim();
    const next = found[i + 1];
    // "from 2004 to 2005", and without "from": "in 1974 to 1975", "for the period 1982 to jul 1989".
    const rangeGoverned = governor === null || DURING_GOVERNORS.has(governor);
    if (rangeGoverned && next && RANGE_LINK.test(question.slice(period.end, next.start))) {
      const start = period.start - (GOVERNOR.exec(before)?.[0].length ?? 0);
      return { kind: TimeScopeKind.DURING, text: text(start, next.end), from: period.from, to: next.to };
    }
    const start = period.start - (governor ? GOVERNOR.exec(before)![0].length : 0);
    const words = text(start, period.end);
    // A range read as one ("from Nov 1964 to Nov 1967") runs to the end of its last part.
    if (period.through && (governor === null || DURING_GOVERNORS.has(governor)))
      return { kind: TimeScopeKind.DURING, text: words, from: period.from, to: period.through.to };
    // "now" beside a stated time describes the subject ("the company now known as Marriott … from 1964 to 1967"): the stated time is the scope.
    if (period.present && found.some((other) => !other.present)) continue;
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
  const neighbour = namedNeighbour(question);
  if (neighbour?.side === 'after') return { kind: TimeScopeKind.NEXT, text: neighbour.text, from: null, to: asOf };
  // Its time is the text's to give: planning reads it there (qa/textAnchors.ts) and sets the bounds.
  const event = eventClause(question);
  if (event) return { kind: TimeScopeKind.WHEN, text: event.text, from: null, to: null };
  const earlier = earlierCue(question);
  if (earlier) return { kind: TimeScopeKind.PREVIOUS, text: earlier, from: null, to: asOf };
  const ordinal = ordinalOf(question, expectedAnswerType(question));
  return ordinal ? { kind: ordinal.side === 'first' ? TimeScopeKind.FIRST : TimeScopeKind.LAST, text: ordinal.text, from: null, to: asOf } : null;
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
  if (scope === null || [TimeScopeKind.CURRENT, TimeScopeKind.PREVIOUS, TimeScopeKind.NEXT, TimeScopeKind.FIRST, TimeScopeKind.LAST].includes(scope.kind))
    return { instants: [asOf], main: 'last', note: null };
  const first = snapshotDates[0]!;
  const day = (date: Date): string => date.toISOString().slice(0, 10);
  if (scope.kind === TimeScopeKind.WHEN && scope.from === null && scope.to === null) {
    return { instants: [], main: 'last', note: `asks about the time of "${scope.text}", which nothing the store knew as of ${day(asOf)} dates` };
  }
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
