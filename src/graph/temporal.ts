import neo4j, { type DateTime as Neo4jDateTime } from 'neo4j-driver';

/** Neo4j stores valid and transaction time as zoned DateTime values in UTC. */
export function toNeo4jDateTime(date: Date): Neo4jDateTime<number> {
  return neo4j.types.DateTime.fromStandardDate(date) as Neo4jDateTime<number>;
}

export function fromNeo4jDateTime(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  if (neo4j.isDateTime(value as Neo4jDateTime)) return (value as Neo4jDateTime).toStandardDate();
  throw new TypeError(`expected a Neo4j DateTime, got ${String(value)}`);
}

export function requireDate(value: unknown): Date {
  const date = fromNeo4jDateTime(value);
  if (!date) throw new TypeError('expected a Neo4j DateTime, got null');
  return date;
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
    throw new RangeError(`${what}: "${text}" is not a date (YYYY-MM-DD) or an ISO 8601 date-time`);
  }
  return date;
}

export function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
