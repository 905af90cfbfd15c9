import DataLoader from 'dataloader';
import type { ArticleRecord, ChangeEventRecord, ChangeKind, FactRecord, SentenceRecord, SnapshotRecord } from '../domain/model.js';
import type { ReadRepository } from './readRepository.js';
import type { SnapshotRepository } from './snapshotRepository.js';

/** A per-parent lookup that also depends on shared arguments (asOf, a page size...). */
export interface ParentKey<P> {
  id: string;
  params: P;
}

function byId<V>(fetch: (ids: readonly string[]) => Promise<Map<string, V>>, cache: boolean): DataLoader<string, V | null> {
  return new DataLoader(
    async (ids) => {
      const found = await fetch(ids);
      return ids.map((id) => found.get(id) ?? null);
    },
    { cache },
  );
}

/**
 * Batches per-parent lookups into one query per distinct set of shared arguments: a page of
 * articles asking for their facts as of one date costs one round trip, however many articles.
 */
function byParent<P, V>(
  signature: (params: P) => string,
  fetch: (ids: readonly string[], params: P) => Promise<Map<string, V>>,
  missing: () => V,
  cache: boolean,
): DataLoader<ParentKey<P>, V, string> {
  return new DataLoader<ParentKey<P>, V, string>(
    async (keys) => {
      const groups = new Map<string, { params: P; ids: string[] }>();
      for (const key of keys) {
        const group = groups.get(signature(key.params)) ?? { params: key.params, ids: [] };
        group.ids.push(key.id);
        groups.set(signature(key.params), group);
      }
      const answers = new Map<string, Map<string, V>>();
      await Promise.all([...groups].map(async ([groupKey, group]) => answers.set(groupKey, await fetch(group.ids, group.params))));
      return keys.map((key) => answers.get(signature(key.params))!.get(key.id) ?? missing());
    },
    { cache, cacheKeyFn: (key) => `${signature(key.params)}\u0000${key.id}` },
  );
}

const atTime = (date: Date): string => date.toISOString();

export interface ChangePageParams {
  afterSeq: number;
  kinds: readonly ChangeKind[] | null;
  limit: number;
}

/**
 * The DataLoaders of one GraphQL operation; never shared across operations. A subscription
 * lives for hours, so its loaders batch but do not cache (`cache: false`).
 */
export class Loaders {
  readonly article: DataLoader<string, ArticleRecord | null>;
  readonly sentence: DataLoader<string, SentenceRecord | null>;
  readonly fact: DataLoader<string, FactRecord | null>;
  readonly sentencesValidAt: DataLoader<ParentKey<Date>, SentenceRecord[], string>;
  readonly sentencesDeletedAt: DataLoader<ParentKey<Date>, SentenceRecord[], string>;
  readonly factsValidAt: DataLoader<ParentKey<Date>, FactRecord[], string>;
  readonly previousSentenceId: DataLoader<string, string | null>;
  readonly nextSentenceId: DataLoader<string, string | null>;
  readonly previousFactId: DataLoader<string, string | null>;
  readonly nextFactId: DataLoader<string, string | null>;
  readonly articleChanges: DataLoader<ParentKey<ChangePageParams>, { changes: ChangeEventRecord[]; totalCount: number }, string>;
  private snapshotList?: Promise<SnapshotRecord[]>;

  constructor(
    repository: ReadRepository,
    private readonly snapshotRepository: SnapshotRepository,
    private readonly cache = true,
  ) {
    this.article = byId((ids) => repository.articlesByIds(ids), cache);
    this.sentence = byId((ids) => repository.sentencesByIds(ids), cache);
    this.fact = byId((ids) => repository.factsByIds(ids), cache);
    this.sentencesValidAt = byParent(
      atTime,
      (ids, asOf) => repository.sentencesValidAt(ids, asOf),
      () => [],
      cache,
    );
    this.sentencesDeletedAt = byParent(
      atTime,
      (ids, at) => repository.sentencesDeletedAt(ids, at),
      () => [],
      cache,
    );
    this.factsValidAt = byParent(
      atTime,
      (ids, asOf) => repository.factsValidAt(ids, asOf),
      () => [],
      cache,
    );
    const linked = (label: 'Sentence' | 'Fact', type: 'REVISED_AS' | 'SUPERSEDED_BY', direction: 'previous' | 'next') =>
      byId((ids) => repository.linkedVersionIds(label, type, direction, ids), cache);
    this.previousSentenceId = linked('Sentence', 'REVISED_AS', 'previous');
    this.nextSentenceId = linked('Sentence', 'REVISED_AS', 'next');
    this.previousFactId = linked('Fact', 'SUPERSEDED_BY', 'previous');
    this.nextFactId = linked('Fact', 'SUPERSEDED_BY', 'next');
    this.articleChanges = byParent(
      (page) => JSON.stringify(page),
      (ids, page) => repository.changesOfArticles(ids, page.afterSeq, page.kinds, page.limit),
      () => ({ changes: [], totalCount: 0 }),
      cache,
    );
  }

  /** All snapshots in date order, read once per request (every time when not caching). */
  snapshots(): Promise<SnapshotRecord[]> {
    if (!this.cache) return this.snapshotRepository.list();
    this.snapshotList ??= this.snapshotRepository.list();
    return this.snapshotList;
  }
}
