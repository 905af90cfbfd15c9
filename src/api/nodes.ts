import type { ChangeEventRecord, FactRecord, SentenceLabel, SentenceRecord } from '../domain/model.js';
import { encodeCursor } from './cursors.js';
import type DataLoader from 'dataloader';
import type { ChangeEvent, Connection, Fact, Sentence } from './types.js';

/** Maps stored records to the GraphQL object types. */
export function sentenceNode(record: SentenceRecord, index: number | null = null, label: SentenceLabel | null = null): Sentence {
  return { ...record, index, label };
}

export function factNode(record: FactRecord): Fact {
  return { ...record, outdated: record.validTo !== null };
}

/**
 * `derive` of a list the request's DataLoaders returned, computed once per list. Every parent
 * that asks for the same article's sentences as of the same date gets the same list from the
 * loader, so a selection that reaches one article's sentences from each of its 3,000 sentences
 * builds their nodes (or joins their text) once, not 3,000 times over, before the response
 * budget can count them. Other arguments must be fixed by the list (what its loader key holds).
 */
export function oncePerList<R extends object, A extends unknown[], T>(
  derive: (records: R, ...fixedByTheList: A) => T,
): (records: R, ...fixedByTheList: A) => T {
  const derived = new WeakMap<R, T>();
  return (records, ...rest) => {
    if (!derived.has(records)) derived.set(records, derive(records, ...rest));
    return derived.get(records)!;
  };
}

/** One page of a Relay connection. */
export function connection<T>(
  nodes: T[],
  cursorOf: (node: T) => string,
  page: { hasNextPage: boolean; hasPreviousPage: boolean; totalCount: number },
): Connection<T> {
  const edges = nodes.map((node) => ({ node, cursor: cursorOf(node) }));
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
    totalCount: page.totalCount,
  };
}

export function changeConnection(
  changes: ChangeEventRecord[],
  page: { hasNextPage: boolean; hasPreviousPage: boolean; totalCount: number },
): Connection<ChangeEvent> {
  return connection<ChangeEvent>(changes, (change) => encodeCursor('change', change.seq), page);
}

/** Follows a version link (previous/next) to the linked version, if any. */
export async function linkedVersion<R, N>(
  linkedId: DataLoader<string, string | null>,
  versions: DataLoader<string, R | null>,
  id: string,
  toNode: (record: R) => N,
): Promise<N | null> {
  const otherId = await linkedId.load(id);
  const record = otherId === null ? null : await versions.load(otherId);
  return record === null ? null : toNode(record);
}
