/**
 * How a version's event times are stored on its node. Neo4j stores no maps as properties, so the
 * intervals are parallel lists: eventTimeFrom, eventTimeTo, eventTimeStart, eventTimeEnd. A
 * time's words are the version's own text between its offsets, so they are not stored again: only
 * a version with a time read outside its text (an office's term, from other attributes of its
 * infobox, at offsets 0..0) keeps them, in eventTimeText. Versions written before keep
 * eventTimeText for every time, and are read the same way. Neo4j 5 indexes a list only as a whole
 * value, never by its elements, so their hull is stored beside them as two scalars under range
 * indexes (migration 012): eventFrom, the earliest start, and eventTo, the latest end. "Versions whose text speaks of [from, to)" seeks the hull and
 * then checks each interval, in one query.
 *
 * Bounds are milliseconds since 1970-01-01 UTC, as floats, an open bound -Infinity or +Infinity:
 * the lists hold no nulls and the hull of an open interval stays open. Not DateTime values: an
 * ingest writes several per sentence, and the driver packs each DateTime with integer arithmetic
 * of its own, which doubled the ingest's own CPU time on the synthetic benchmark.
 */
import type { EventTime } from '../domain/model.js';
import type { Period } from '../domain/time.js';

/** The event-time properties of a version, to SET on its node; none when its text states no time. */
export function eventTimeProperties(times: readonly EventTime[]): Record<string, unknown> {
  if (times.length === 0) return {};
  const starts = times.map((time) => time.from?.getTime() ?? -Infinity);
  const ends = times.map((time) => time.to?.getTime() ?? Infinity);
  return {
    eventTimeFrom: starts,
    eventTimeTo: ends,
    eventTimeStart: times.map((time) => time.start),
    eventTimeEnd: times.map((time) => time.end),
    ...(times.some(readOutsideText) ? { eventTimeText: times.map((time) => time.text) } : {}),
    eventFrom: Math.min(...starts),
    eventTo: Math.max(...ends),
  };
}

const readOutsideText = (time: EventTime): boolean => time.start === time.end;

/** The fields a `u {…}` map projection needs to read a version's event times back. */
export const EVENT_TIME_FIELDS = '.eventTimeFrom, .eventTimeTo, .eventTimeText, .eventTimeStart, .eventTimeEnd';

const instant = (milliseconds: number): Date | null => (Number.isFinite(milliseconds) ? new Date(milliseconds) : null);

/**
 * A version's event times from the fields of EVENT_TIME_FIELDS and its text (a sentence's or
 * passage's text, a fact's value); none when it has none (or they were never read).
 */
export function eventTimesOf(row: Record<string, unknown>, text: string): EventTime[] {
  const starts = (row.eventTimeFrom as number[] | null | undefined) ?? [];
  const ends = row.eventTimeTo as number[];
  const texts = row.eventTimeText as string[] | null | undefined;
  const offsets = { start: row.eventTimeStart as number[], end: row.eventTimeEnd as number[] };
  return starts.map((start, i) => ({
    from: instant(start),
    to: instant(ends[i]!),
    text: texts?.[i] ?? text.slice(offsets.start[i], offsets.end[i]),
    start: offsets.start[i]!,
    end: offsets.end[i]!,
  }));
}

/** The parameters `speaksOfCypher` reads: the period in milliseconds, an open bound infinite. */
export function periodParams(period: Period): { periodFrom: number; periodTo: number } {
  return { periodFrom: period.from?.getTime() ?? -Infinity, periodTo: period.to?.getTime() ?? Infinity };
}

/**
 * `speaksOf` (domain/time.ts) in Cypher: the version `u` states a time overlapping
 * [$periodFrom, $periodTo). Its hull first (what the range indexes answer), then each interval.
 */
export function speaksOfCypher(u: string): string {
  return `${u}.eventFrom < $periodTo AND ${u}.eventTo > $periodFrom
    AND any(i IN range(0, coalesce(size(${u}.eventTimeFrom), 0) - 1) WHERE ${u}.eventTimeFrom[i] < $periodTo AND ${u}.eventTimeTo[i] > $periodFrom)`;
}
