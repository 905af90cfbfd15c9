/**
 * Event time in the graph: which versions' text speaks of a period, and the backfill of versions
 * written before event times were read (migration 012 labels them :PendingEventTimes).
 */
import type { EventTime, FactRecord } from '../domain/model.js';
import type { Period } from '../domain/time.js';
import { int, type CypherRunner } from './database.js';
import { eventTimeProperties, periodParams, speaksOfCypher } from './eventTimeProperties.js';
import { FACT_FIELDS, toFact } from './readRepository.js';
import { toUnit, UNIT_FIELDS, type UnitLabel, type UnitRecord } from './retrievalRepository.js';
import { fromNeo4jDateTime, requireDate, toNeo4jDateTime } from './temporal.js';
import { validAtCypher } from './validity.js';

const HAS: Record<UnitLabel, string> = { Sentence: 'HAS_SENTENCE', Passage: 'HAS_PASSAGE' };

/** One version of an article's history as the backfill reads it: enough to read its event times as the ingest would have. */
export interface HistoryVersion {
  id: string;
  text: string;
  validFrom: Date;
  validTo: Date | null;
  /** Whether its event times are still to be read. */
  pending: boolean;
}

export interface ArticleHistory {
  articleId: string;
  sentences: Array<HistoryVersion & { orderKey: string; startsParagraph: boolean }>;
  passages: HistoryVersion[];
  /** Facts, with `attribute` and `value` (value as `text`). */
  facts: Array<HistoryVersion & { attribute: string }>;
}

export class EventTimeRepository {
  constructor(private readonly db: CypherRunner) {}

  /**
   * The sentence or passage versions valid at `asOf` (what the store knew then) whose text states
   * a time overlapping `period` (a null bound open), with their event times: of the articles
   * named, or of the whole store when `articleIds` is null, at most `limit`. Sentences come in
   * document order within each article.
   */
  async unitsSpeakingOf(label: UnitLabel, articleIds: readonly string[] | null, period: Period, asOf: Date, limit = 1000): Promise<UnitRecord[]> {
    const match =
      articleIds === null
        ? `MATCH (u:${label}) WHERE ${speaksOfCypher('u')} AND ${validAtCypher('u')}`
        : `UNWIND $articleIds AS articleId
           MATCH (:Article {id: articleId})-[:${HAS[label]}]->(u:${label}) WHERE ${validAtCypher('u')} AND ${speaksOfCypher('u')}`;
    const rows = await this.db.run<{ unit: Record<string, unknown> }>(
      `${match}
       RETURN ${UNIT_FIELDS} AS unit ORDER BY u.articleId, u.orderKey, u.id LIMIT $limit`,
      { articleIds, asOf: toNeo4jDateTime(asOf), limit: int(limit), ...periodParams(period) },
    );
    return rows.map((row) => toUnit(row.unit));
  }

  /** The facts of these articles valid at `asOf` whose value (or term) states a time overlapping `period`. */
  async factsSpeakingOf(subjects: readonly string[], period: Period, asOf: Date): Promise<FactRecord[]> {
    const rows = await this.db.run<{ fact: Record<string, unknown> }>(
      `UNWIND $subjects AS subject
       MATCH (:Article {id: subject})-[:HAS_FACT]->(f:Fact) WHERE ${validAtCypher('f')} AND ${speaksOfCypher('f')}
       RETURN ${FACT_FIELDS} AS fact ORDER BY f.subject, f.attributeKey`,
      { subjects, asOf: toNeo4jDateTime(asOf), ...periodParams(period) },
    );
    return rows.map((row) => toFact(row.fact));
  }

  /** How many versions are waiting for their event times. */
  async countPending(): Promise<number> {
    const rows = await this.db.run<{ total: number }>('MATCH (v:PendingEventTimes) RETURN count(v) AS total');
    return rows[0]?.total ?? 0;
  }

  /** Up to `limit` articles with versions waiting for their event times. */
  async pendingArticles(limit: number): Promise<string[]> {
    const rows = await this.db.run<{ id: string }>(
      `MATCH (a:Article)-[:HAS_SENTENCE|HAS_PASSAGE|HAS_FACT]->(:PendingEventTimes) RETURN DISTINCT a.id AS id LIMIT $limit`,
      { limit: int(limit) },
    );
    return rows.map((row) => row.id);
  }

  /** Every version of these articles, closed ones too, with what the backfill needs to read them. */
  async histories(articleIds: readonly string[]): Promise<ArticleHistory[]> {
    const rows = await this.db.run<{ articleId: string; sentences: Row[]; passages: Row[]; facts: Row[] }>(
      `UNWIND $ids AS id
       MATCH (a:Article {id: id})
       CALL (a) {
         OPTIONAL MATCH (a)-[:HAS_SENTENCE]->(s:Sentence)
         RETURN collect(s {.id, .text, .validFrom, .validTo, .orderKey, .startsParagraph, pending: s:PendingEventTimes}) AS sentences
       }
       CALL (a) {
         OPTIONAL MATCH (a)-[:HAS_PASSAGE]->(p:Passage)
         RETURN collect(p {.id, .text, .validFrom, .validTo, pending: p:PendingEventTimes}) AS passages
       }
       CALL (a) {
         OPTIONAL MATCH (a)-[:HAS_FACT]->(f:Fact)
         RETURN collect(f {.id, text: f.value, .attribute, .validFrom, .validTo, pending: f:PendingEventTimes}) AS facts
       }
       RETURN a.id AS articleId, sentences, passages, facts`,
      { ids: articleIds },
    );
    const version = (row: Row): HistoryVersion => ({
      id: row.id as string,
      text: row.text as string,
      validFrom: requireDate(row.validFrom),
      validTo: fromNeo4jDateTime(row.validTo),
      pending: row.pending as boolean,
    });
    return rows.map((row) => ({
      articleId: row.articleId,
      sentences: row.sentences.map((s) => ({ ...version(s), orderKey: s.orderKey as string, startsParagraph: Boolean(s.startsParagraph) })),
      passages: row.passages.map(version),
      facts: row.facts.map((f) => ({ ...version(f), attribute: f.attribute as string })),
    }));
  }

  /** Stores the event times of versions and takes them off the waiting list; returns how many were waiting. */
  async storeEventTimes(label: UnitLabel | 'Fact', versions: ReadonlyArray<{ id: string; eventTimes: EventTime[] }>): Promise<number> {
    if (versions.length === 0) return 0;
    const rows = await this.db.run<{ stored: number }>(
      `UNWIND $versions AS row
       MATCH (v:${label} {id: row.id}) WHERE v:PendingEventTimes
       SET v += row.properties
       REMOVE v:PendingEventTimes
       RETURN count(v) AS stored`,
      { versions: versions.map((version) => ({ id: version.id, properties: eventTimeProperties(version.eventTimes) })) },
    );
    return rows[0]?.stored ?? 0;
  }
}

type Row = Record<string, unknown>;
