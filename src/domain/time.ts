/**
 * ChronoQL's time model in one place. Every version (article, sentence, fact, passage) is valid
 * over the half-open interval [validFrom, validTo) of valid time: from the snapshot that made it
 * until the snapshot that replaced it, or on (validTo null, the current version) while nothing
 * has. Transaction time (recordedAt, closedAt) says when the store learned each of these.
 *
 * The rule has three faces, all defined here or beside it:
 * - in TypeScript, `isValidAt` and `isCurrentVersion`, applied to every hit of the native index;
 * - in Cypher, graph/validity.ts writes the same two predicates for storage (Cypher stays in graph/);
 * - in index time, the native filter's int32 clock (`IndexMinute`): whole minutes since the
 *   epoch. The conversion widens each interval to the minutes it touches (validFrom rounded
 *   down, validTo up), so the index never loses a valid unit; a unit whose boundary shares
 *   asOf's minute may pass the index and is then dropped by `isValidAt`.
 *
 * A search whose index knows nothing of valid time (Lucene, HNSW) or knows it only to the
 * minute (the native index) filters afterwards and may come up short: `deepenUntilEnoughValid`
 * is the one policy every such search follows.
 */
import { InvalidInputError, quoteInput } from './errors.js';
import type { EventTime } from './model.js';

export interface ValidInterval {
  validFrom: Date;
  validTo: Date | null;
}

export function isValidAt(interval: ValidInterval, asOf: Date): boolean {
  const at = asOf.getTime();
  return interval.validFrom.getTime() <= at && (interval.validTo === null || interval.validTo.getTime() > at);
}

/** The current version: nothing has replaced it yet. */
export function isCurrentVersion(interval: Pick<ValidInterval, 'validTo'>): boolean {
  return interval.validTo === null;
}

/** A period of event time asked about ("during"): half-open, a null bound open. */
export interface Period {
  from: Date | null;
  to: Date | null;
}

/**
 * Whether a version's text speaks of a period: one of its event times overlaps it, open bounds
 * reaching to the beginning or the end of time. In Cypher: graph/eventTimeProperties.ts.
 */
export function speaksOf(times: readonly EventTime[], period: Period): boolean {
  return times.some(
    (time) => (time.from === null || period.to === null || time.from < period.to) && (time.to === null || period.from === null || time.to > period.from),
  );
}

/** A point in the native index's time: whole minutes since 1970-01-01T00:00Z, an int32. */
export type IndexMinute = number;

const MINUTE_MS = 60_000;
const INDEX_MIN = -2_147_483_648;
/** The native index's "still valid" end (int32 max); every closed interval ends below it. */
const INDEX_OPEN_END = 2_147_483_647;

const clamp = (value: number, min: number, max: number): number => Math.min(Math.max(value, min), max);

/** An instant in index time, rounded down: asOf, or the start of a version. */
export function indexStart(instant: Date): IndexMinute {
  return clamp(Math.floor(instant.getTime() / MINUTE_MS), INDEX_MIN, INDEX_OPEN_END - 2);
}

/**
 * The end of a version in index time, rounded up. Since validTo > validFrom, the rounded
 * interval is never empty, as the index requires, even where dates beyond the index's range
 * (about years -2100 to 6000) are clamped: starts stop one below the last end.
 */
export function indexEnd(validTo: Date): IndexMinute {
  return clamp(Math.ceil(validTo.getTime() / MINUTE_MS), INDEX_MIN + 1, INDEX_OPEN_END - 1);
}

/** A version's interval in index time, widened to whole minutes; `validTo` null stays open. */
export function indexInterval(interval: ValidInterval): { validFrom: IndexMinute; validTo: IndexMinute | null } {
  return { validFrom: indexStart(interval.validFrom), validTo: interval.validTo && indexEnd(interval.validTo) };
}

/** Sidecar tag of indexes built with this conversion: an index saved in other units is rebuilt. */
export const INDEX_TIME_UNIT = 'minute';

/** One round of a search that filters by valid time after ranking. */
export interface FilteredPage<R> {
  result: R;
  /** How many of the candidates survived the validity filter. */
  valid: number;
  /** How many candidates the index gave: fewer than asked means it has no more. */
  scanned: number;
}

/**
 * Asks an index for `first` candidates, then 4 times as many, up to `limit`, until `wanted` of
 * them are valid at asOf, the index has no more, or the limit is reached. The closed versions of
 * a long history can fill the first pages of any ranking, valid or not.
 */
export async function deepenUntilEnoughValid<R>(
  wanted: number,
  bounds: { first: number; limit: number },
  search: (candidates: number) => Promise<FilteredPage<R>>,
): Promise<R> {
  for (let candidates = Math.min(bounds.first, bounds.limit); ; candidates = Math.min(candidates * 4, bounds.limit)) {
    const page = await search(candidates);
    if (page.valid >= wanted || page.scanned < candidates || candidates >= bounds.limit) return page.result;
  }
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Parses a user-supplied date. A bare calendar date means midnight UTC, the instant a
 * snapshot of that date becomes valid.
 */
export function parseDateInput(text: string, what: string): Date {
  const trimmed = text.trim();
  const date = DATE_ONLY.test(trimmed) ? new Date(`${trimmed}T00:00:00.000Z`) : new Date(trimmed);
  if (Number.isNaN(date.getTime()) || (DATE_ONLY.test(trimmed) && date.toISOString().slice(0, 10) !== trimmed)) {
    throw new InvalidInputError(`${what}: ${quoteInput(text)} is not a date (YYYY-MM-DD) or an ISO 8601 date-time`);
  }
  return date;
}

export function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
