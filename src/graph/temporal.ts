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
