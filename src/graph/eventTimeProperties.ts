/**
 * How a version's event times are stored on its node. Neo4j stores no maps as properties, so the
 * intervals are parallel lists: eventTimeFrom, eventTimeTo (DateTime), eventTimeText,
 * eventTimeStart, eventTimeEnd. Neo4j 5 indexes a list only as a whole value, never by its
 * elements, so their hull is stored beside them as two scalars under range indexes (migration
 * 012): eventFrom, the earliest start, and eventTo, the latest end. "Versions whose text speaks of
 * [from, to)" seeks the hull and then checks each interval, in one query. An open bound is stored
 * as the first or last instant a JavaScript Date can hold, so the lists hold no nulls and the
 * hull of an open interval stays open; it is read back as null.
 */
import type { EventTime } from '../domain/model.js';
import type { Period } from '../domain/time.js';
import { fromNeo4jDateTime, toNeo4jDateTime } from './temporal.js';

const BEGINNING_OF_TIME = new Date(-8.64e15);
const END_OF_TIME = new Date(8.64e15);

/** The event-time properties of a version, to SET on its node; all null (removed) when its text states none. */
export function eventTimeProperties(times: readonly EventTime[]): Record<string, unknown> {
  if (times.length === 0) {
    return { eventTimeFrom: null, eventTimeTo: null, eventTimeText: null, eventTimeStart: null, eventTimeEnd: null, eventFrom: null, eventTo: null };
  }
  const starts = times.map((time) => time.from ?? BEGINNING_OF_TIME);
  const ends = times.map((time) => time.to ?? END_OF_TIME);
  return {
    eventTimeFrom: starts.map(toNeo4jDateTime),
    eventTimeTo: ends.map(toNeo4jDateTime),
    eventTimeText: times.map((time) => time.text),
    eventTimeStart: times.map((time) => time.start),
    eventTimeEnd: times.map((time) => time.end),
    eventFrom: toNeo4jDateTime(new Date(Math.min(...starts.map(Number)))),
    eventTo: toNeo4jDateTime(new Date(Math.max(...ends.map(Number)))),
  };
}

/** The fields a `u {…}` map projection needs to read a version's event times back. */
export const EVENT_TIME_FIELDS = '.eventTimeFrom, .eventTimeTo, .eventTimeText, .eventTimeStart, .eventTimeEnd';

const openAt = (bound: Date | null, open: Date): Date | null => (bound && bound.getTime() === open.getTime() ? null : bound);

/** A version's event times from the fields of EVENT_TIME_FIELDS; none when it has none (or they were never read). */
export function eventTimesOf(row: Record<string, unknown>): EventTime[] {
  const starts = (row.eventTimeFrom as unknown[] | null | undefined) ?? [];
  const ends = row.eventTimeTo as unknown[];
  const texts = row.eventTimeText as string[];
  const offsets = { start: row.eventTimeStart as number[], end: row.eventTimeEnd as number[] };
  return starts.map((start, i) => ({
    from: openAt(fromNeo4jDateTime(start), BEGINNING_OF_TIME),
    to: openAt(fromNeo4jDateTime(ends[i]), END_OF_TIME),
    text: texts[i]!,
    start: offsets.start[i]!,
    end: offsets.end[i]!,
  }));
}

/** The parameters `speaksOfCypher` reads: the period, its open bounds as the ends of time. */
export function periodParams(period: Period): { periodFrom: unknown; periodTo: unknown } {
  return { periodFrom: toNeo4jDateTime(period.from ?? BEGINNING_OF_TIME), periodTo: toNeo4jDateTime(period.to ?? END_OF_TIME) };
}

/**
 * `speaksOf` (domain/time.ts) in Cypher: the version `u` states a time overlapping
 * [$periodFrom, $periodTo). Its hull first (what the range indexes answer), then each interval.
 */
export function speaksOfCypher(u: string): string {
  return `${u}.eventFrom < $periodTo AND ${u}.eventTo > $periodFrom
    AND any(i IN range(0, size(${u}.eventTimeFrom) - 1) WHERE ${u}.eventTimeFrom[i] < $periodTo AND ${u}.eventTimeTo[i] > $periodFrom)`;
}
