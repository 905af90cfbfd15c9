import type { ChangeEventRecord, FactRecord, SentenceLabel, SentenceRecord } from '../graph/model.js';
import { encodeCursor } from './cursors.js';
import type { ChangeEvent, ChangeEventConnection, Fact, Sentence } from './types.js';

/** Maps stored records to the GraphQL object types. */
export function sentenceNode(record: SentenceRecord, index: number | null = null, label: SentenceLabel | null = null): Sentence {
  return { ...record, index, label };
}

export function factNode(record: FactRecord): Fact {
  return { ...record, outdated: record.validTo !== null };
}

export function changeConnection(
  changes: ChangeEventRecord[],
  options: { hasNextPage: boolean; hasPreviousPage: boolean; totalCount: number },
): ChangeEventConnection {
  const edges = changes.map((change) => ({ node: change as ChangeEvent, cursor: encodeCursor('change', change.seq) }));
  return {
    edges,
    pageInfo: {
      hasNextPage: options.hasNextPage,
      hasPreviousPage: options.hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
    totalCount: options.totalCount,
  };
}
