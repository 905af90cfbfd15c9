import { int, type CypherRunner } from './database.js';
import type { ArticleRecord, ChangeEventRecord, ChangeKind, FactRecord, SentenceLabel, SentenceRecord } from '../domain/model.js';
import { fromNeo4jDateTime, requireDate, toNeo4jDateTime } from './temporal.js';
import { validAtCypher } from './validity.js';
import { EVENT_TIME_FIELDS, eventTimesOf } from './eventTimeProperties.js';

const ARTICLE_FIELDS = 'a {.id, .title, .validFrom, .validTo, .recordedAt}';
const SENTENCE_FIELDS = `s {.id, .articleId, .text, .orderKey, .startsParagraph, .origin, .confident, .validFrom, .validTo, .recordedAt, ${EVENT_TIME_FIELDS}}`;
export const FACT_FIELDS = `f {.id, .subject, .attribute, .value, .change, .addedMembers, .removedMembers, .validFrom, .validTo, .recordedAt, ${EVENT_TIME_FIELDS}}`;
const CHANGE_FIELDS = 'e {.seq, .kind, .snapshotId, .articleId, .at, .recordedAt, .sentenceId, .previousSentenceId, .factId, .previousFactId}';

type Row = Record<string, unknown>;

export function toArticle(row: Row): ArticleRecord {
  return {
    id: row.id as string,
    title: row.title as string,
    validFrom: requireDate(row.validFrom),
    validTo: fromNeo4jDateTime(row.validTo),
    recordedAt: requireDate(row.recordedAt),
  };
}

export function toSentence(row: Row): SentenceRecord {
  return {
    id: row.id as string,
    articleId: row.articleId as string,
    text: row.text as string,
    orderKey: row.orderKey as string,
    startsParagraph: Boolean(row.startsParagraph),
    origin: (row.origin as SentenceLabel | null) ?? null,
    confident: (row.confident as boolean | null) ?? null,
    eventTimes: eventTimesOf(row, row.text as string),
    validFrom: requireDate(row.validFrom),
    validTo: fromNeo4jDateTime(row.validTo),
    recordedAt: requireDate(row.recordedAt),
  };
}

export function toFact(row: Row): FactRecord {
  return {
    id: row.id as string,
    subject: row.subject as string,
    attribute: row.attribute as string,
    value: row.value as string,
    change: (row.change as FactRecord['change']) ?? null,
    addedMembers: (row.addedMembers as string[] | null) ?? [],
    removedMembers: (row.removedMembers as string[] | null) ?? [],
    eventTimes: eventTimesOf(row, row.value as string),
    validFrom: requireDate(row.validFrom),
    validTo: fromNeo4jDateTime(row.validTo),
    recordedAt: requireDate(row.recordedAt),
  };
}

export function toChangeEvent(row: Row): ChangeEventRecord {
  return {
    seq: row.seq as number,
    kind: row.kind as ChangeKind,
    snapshotId: row.snapshotId as string,
    articleId: row.articleId as string,
    at: requireDate(row.at),
    recordedAt: requireDate(row.recordedAt),
    sentenceId: (row.sentenceId as string | null) ?? null,
    previousSentenceId: (row.previousSentenceId as string | null) ?? null,
    factId: (row.factId as string | null) ?? null,
    previousFactId: (row.previousFactId as string | null) ?? null,
  };
}

export interface ChangeFilter {
  articleIds?: readonly string[] | null;
  kinds?: readonly ChangeKind[] | null;
}

/** A filter of the stored changes: also by valid time, the date of each change's snapshot. */
export interface StoredChangeFilter extends ChangeFilter {
  /** Only changes dated after this. */
  since?: Date | null;
  /** Only changes dated at or before this. */
  until?: Date | null;
}

const changeFilterClause =
  'AND ($articleIds IS NULL OR e.articleId IN $articleIds) AND ($kinds IS NULL OR e.kind IN $kinds) AND ($since IS NULL OR e.at > $since) AND ($until IS NULL OR e.at <= $until)';

function changeFilterParams(filter: StoredChangeFilter): Record<string, unknown> {
  const at = (date: Date | null | undefined) => (date ? toNeo4jDateTime(date) : null);
  return { articleIds: filter.articleIds ?? null, kinds: filter.kinds ?? null, since: at(filter.since), until: at(filter.until) };
}

/** Every read query of the API. Batch methods take many parent ids and answer in one round trip. */
export class ReadRepository {
  constructor(private readonly db: CypherRunner) {}

  async articlesByIds(ids: readonly string[]): Promise<Map<string, ArticleRecord>> {
    const rows = await this.db.run<{ article: Row }>(`UNWIND $ids AS id MATCH (a:Article {id: id}) RETURN ${ARTICLE_FIELDS} AS article`, { ids });
    return new Map(rows.map((row) => [row.article.id as string, toArticle(row.article)]));
  }

  /** Articles ordered by id, after the cursor id, optionally filtered by a title substring. */
  async articlesPage(options: { first: number; afterId: string | null; titleContains: string | null }): Promise<{
    articles: ArticleRecord[];
    hasNextPage: boolean;
    totalCount: number;
  }> {
    const where = '($titleContains IS NULL OR toLower(a.title) CONTAINS toLower($titleContains))';
    const rows = await this.db.run<{ articles: Row[]; totalCount: number }>(
      `CALL () { MATCH (a:Article) WHERE ${where} RETURN count(a) AS totalCount }
       CALL () {
         MATCH (a:Article) WHERE ${where} AND ($afterId IS NULL OR a.id > $afterId)
         WITH a ORDER BY a.id LIMIT $limit
         RETURN collect(${ARTICLE_FIELDS}) AS articles
       }
       RETURN articles, totalCount`,
      { titleContains: options.titleContains, afterId: options.afterId, limit: int(options.first + 1) },
    );
    const { articles, totalCount } = rows[0]!;
    return {
      articles: articles.slice(0, options.first).map(toArticle),
      hasNextPage: articles.length > options.first,
      totalCount,
    };
  }

  /** Valid sentences of each article at asOf, in document order. */
  async sentencesValidAt(articleIds: readonly string[], asOf: Date): Promise<Map<string, SentenceRecord[]>> {
    return this.grouped(
      articleIds,
      `UNWIND $ids AS id
       CALL (id) {
         MATCH (s:Sentence {articleId: id}) WHERE ${validAtCypher('s')}
         WITH s ORDER BY s.orderKey
         RETURN collect(${SENTENCE_FIELDS}) AS items
       }
       RETURN id, items`,
      { asOf: toNeo4jDateTime(asOf) },
      toSentence,
    );
  }

  /** Sentences that vanished (no successor version) when the snapshot of `at` was applied. */
  async sentencesDeletedAt(articleIds: readonly string[], at: Date): Promise<Map<string, SentenceRecord[]>> {
    return this.grouped(
      articleIds,
      `UNWIND $ids AS id
       CALL (id) {
         MATCH (s:Sentence {articleId: id, validTo: $at}) WHERE NOT (s)-[:REVISED_AS]->()
         WITH s ORDER BY s.orderKey
         RETURN collect(${SENTENCE_FIELDS}) AS items
       }
       RETURN id, items`,
      { at: toNeo4jDateTime(at) },
      toSentence,
    );
  }

  async factsValidAt(articleIds: readonly string[], asOf: Date): Promise<Map<string, FactRecord[]>> {
    return this.grouped(
      articleIds,
      `UNWIND $ids AS id
       CALL (id) {
         MATCH (:Article {id: id})-[:HAS_FACT]->(f:Fact) WHERE ${validAtCypher('f')}
         WITH f ORDER BY f.attribute
         RETURN collect(${FACT_FIELDS}) AS items
       }
       RETURN id, items`,
      { asOf: toNeo4jDateTime(asOf) },
      toFact,
    );
  }

  /** Every version of every fact of the articles, oldest first per attribute. */
  async factVersions(articleIds: readonly string[]): Promise<Map<string, FactRecord[]>> {
    return this.grouped(
      articleIds,
      `UNWIND $ids AS id
       CALL (id) {
         MATCH (:Article {id: id})-[:HAS_FACT]->(f:Fact)
         WITH f ORDER BY f.attribute, f.validFrom
         RETURN collect(${FACT_FIELDS}) AS items
       }
       RETURN id, items`,
      {},
      toFact,
    );
  }

  async sentencesByIds(ids: readonly string[]): Promise<Map<string, SentenceRecord>> {
    const rows = await this.db.run<{ item: Row }>(`UNWIND $ids AS id MATCH (s:Sentence {id: id}) RETURN ${SENTENCE_FIELDS} AS item`, { ids });
    return new Map(rows.map((row) => [row.item.id as string, toSentence(row.item)]));
  }

  async factsByIds(ids: readonly string[]): Promise<Map<string, FactRecord>> {
    const rows = await this.db.run<{ item: Row }>(`UNWIND $ids AS id MATCH (f:Fact {id: id}) RETURN ${FACT_FIELDS} AS item`, {
      ids,
    });
    return new Map(rows.map((row) => [row.item.id as string, toFact(row.item)]));
  }

  /** The version linked to each given version by `type`, looking forward or backward. */
  async linkedVersionIds(
    label: 'Sentence' | 'Fact',
    type: 'REVISED_AS' | 'SUPERSEDED_BY',
    direction: 'previous' | 'next',
    ids: readonly string[],
  ): Promise<Map<string, string>> {
    const pattern = direction === 'next' ? `(v)-[:${type}]->(other:${label})` : `(other:${label})-[:${type}]->(v)`;
    const rows = await this.db.run<{ id: string; otherId: string }>(
      `UNWIND $ids AS id MATCH (v:${label} {id: id}) MATCH ${pattern} RETURN id, other.id AS otherId`,
      { ids },
    );
    return new Map(rows.map((row) => [row.id, row.otherId]));
  }

  async factValidAt(subject: string, attributeKey: string, asOf: Date): Promise<FactRecord | null> {
    const rows = await this.db.run<{ item: Row }>(
      `MATCH (f:Fact {subject: $subject, attributeKey: $attributeKey}) WHERE ${validAtCypher('f')}
       RETURN ${FACT_FIELDS} AS item LIMIT 1`,
      { subject, attributeKey, asOf: toNeo4jDateTime(asOf) },
    );
    return rows[0] ? toFact(rows[0].item) : null;
  }

  async factHistory(subject: string, attributeKey: string): Promise<FactRecord[]> {
    const rows = await this.db.run<{ item: Row }>(
      `MATCH (f:Fact {subject: $subject, attributeKey: $attributeKey})
       RETURN ${FACT_FIELDS} AS item ORDER BY f.validFrom`,
      { subject, attributeKey },
    );
    return rows.map((row) => toFact(row.item));
  }

  /**
   * How long the unpaginated lists can be: the most sentence and fact versions of any article
   * (an article's list as of any date holds no more), the most versions of any fact, and the
   * number of snapshots (what query costs multiply by).
   */
  async listSizes(): Promise<{ sentencesPerArticle: number; factsPerArticle: number; versionsPerFact: number; snapshots: number }> {
    const rows = await this.db.run<{ sentencesPerArticle: number | null; factsPerArticle: number | null; versionsPerFact: number | null; snapshots: number }>(
      `CALL () { MATCH (s:Sentence) WITH s.articleId AS article, count(*) AS n RETURN max(n) AS sentencesPerArticle }
       CALL () { MATCH (f:Fact) WITH f.subject AS article, count(*) AS n RETURN max(n) AS factsPerArticle }
       CALL () { MATCH (f:Fact) WITH f.subject AS article, f.attributeKey AS attribute, count(*) AS n RETURN max(n) AS versionsPerFact }
       CALL () { MATCH (s:Snapshot) RETURN count(s) AS snapshots }
       RETURN sentencesPerArticle, factsPerArticle, versionsPerFact, snapshots`,
    );
    const row = rows[0];
    return {
      sentencesPerArticle: row?.sentencesPerArticle ?? 0,
      factsPerArticle: row?.factsPerArticle ?? 0,
      versionsPerFact: row?.versionsPerFact ?? 0,
      snapshots: row?.snapshots ?? 0,
    };
  }

  /** The highest sequence number handed out; events up to it are committed. */
  async latestChangeSeq(): Promise<number> {
    const rows = await this.db.run<{ value: number }>(`MATCH (c:ChangeSequence {name: 'changes'}) RETURN c.value AS value`);
    return rows[0]?.value ?? 0;
  }

  /** The last sequence number in the feed, and the highest ever handed out (higher when a rollback withdrew the last ones). */
  async changeSequence(): Promise<{ latest: number; highest: number }> {
    const rows = await this.db.run<{ latest: number; highest: number }>(
      `MATCH (c:ChangeSequence {name: 'changes'}) RETURN c.value AS latest, coalesce(c.highest, c.value) AS highest`,
    );
    return rows[0] ?? { latest: 0, highest: 0 };
  }

  /** Change events with afterSeq < seq <= upToSeq that pass the filter, in order. */
  async changesBetween(afterSeq: number, upToSeq: number | null, filter: StoredChangeFilter, limit: number): Promise<ChangeEventRecord[]> {
    const rows = await this.db.run<{ item: Row }>(
      `MATCH (e:ChangeEvent) WHERE e.seq > $afterSeq AND ($upToSeq IS NULL OR e.seq <= $upToSeq) ${changeFilterClause}
       RETURN ${CHANGE_FIELDS} AS item ORDER BY e.seq LIMIT $limit`,
      { afterSeq: int(afterSeq), upToSeq: upToSeq === null ? null : int(upToSeq), limit: int(limit), ...changeFilterParams(filter) },
    );
    return rows.map((row) => toChangeEvent(row.item));
  }

  async countChanges(filter: StoredChangeFilter): Promise<number> {
    const rows = await this.db.run<{ total: number }>(
      `MATCH (e:ChangeEvent) WHERE true ${changeFilterClause} RETURN count(e) AS total`,
      changeFilterParams(filter),
    );
    return rows[0]?.total ?? 0;
  }

  /** One page of each article's changes after afterSeq, with the article's total, in one round trip. */
  async changesOfArticles(
    articleIds: readonly string[],
    afterSeq: number,
    kinds: readonly ChangeKind[] | null,
    limit: number,
  ): Promise<Map<string, { changes: ChangeEventRecord[]; totalCount: number }>> {
    const rows = await this.db.run<{ id: string; items: Row[]; totalCount: number }>(
      `UNWIND $ids AS id
       CALL (id) {
         MATCH (e:ChangeEvent {articleId: id}) WHERE $kinds IS NULL OR e.kind IN $kinds
         WITH e ORDER BY e.seq
         WITH collect(e) AS changes
         RETURN size(changes) AS totalCount,
                [e IN changes WHERE e.seq > $afterSeq | ${CHANGE_FIELDS}][0..$limit] AS items
       }
       RETURN id, items, totalCount`,
      { ids: articleIds, afterSeq: int(afterSeq), kinds, limit: int(limit) },
    );
    return new Map(rows.map((row) => [row.id, { changes: row.items.map(toChangeEvent), totalCount: row.totalCount }]));
  }

  private async grouped<T>(ids: readonly string[], cypher: string, params: Record<string, unknown>, convert: (row: Row) => T): Promise<Map<string, T[]>> {
    const rows = await this.db.run<{ id: string; items: Row[] }>(cypher, { ...params, ids });
    return new Map(rows.map((row) => [row.id, row.items.map(convert)]));
  }
}
