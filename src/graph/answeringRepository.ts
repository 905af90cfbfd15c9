import type { CypherRunner } from './database.js';
import type { FactRecord } from '../domain/model.js';
import { FACT_FIELDS, toFact } from './readRepository.js';
import { toNeo4jDateTime } from './temporal.js';
import { validAtCypher } from './validity.js';

/** What changed about an article in a time window, and how often it changes. */
export interface ChangeProfile {
  /** Fact versions that started or ended inside the window. */
  changedFacts: FactRecord[];
  /** Sentence events (new, changed, deleted) inside the window. */
  sentenceChanges: number;
  /** Fact updates and sentence revisions in the year up to asOf: how volatile the article is. */
  recentRevisions: number;
  /** Whether the article was first stored inside the window: one side of it knows nothing of the article. */
  added: boolean;
}

/** A fact version with what the question generator needs: its predecessor and the passages that state it. */
export interface FactForQuestions {
  fact: FactRecord;
  title: string;
  previousValue: string | null;
  passageIds: string[];
}

/** The reads of the answering pipeline and of question generation. */
export class AnsweringRepository {
  constructor(private readonly db: CypherRunner) {}

  /** Every article's id and title, current or not: what questions are linked against. */
  async articleTitles(): Promise<Array<{ id: string; title: string }>> {
    return this.db.run<{ id: string; title: string }>(`MATCH (a:Article) RETURN a.id AS id, a.title AS title ORDER BY a.id`);
  }

  async attributeNames(): Promise<string[]> {
    const rows = await this.db.run<{ attribute: string }>(`MATCH (f:Fact) RETURN DISTINCT f.attribute AS attribute ORDER BY attribute`);
    return rows.map((row) => row.attribute);
  }

  async attributesHeldTogether(first: string, second: string): Promise<boolean> {
    const rows = await this.db.run<{ together: boolean }>(
      `RETURN EXISTS { MATCH (a:Article)-[:HAS_FACT]->(:Fact {attribute: $first}) WHERE EXISTS { (a)-[:HAS_FACT]->(:Fact {attribute: $second}) } } AS together`,
      { first, second },
    );
    return rows[0]?.together === true;
  }

  async changeProfiles(articleIds: readonly string[], window: { from: Date; to: Date }, asOf: Date): Promise<Map<string, ChangeProfile>> {
    if (articleIds.length === 0) return new Map();
    const yearBefore = new Date(asOf.getTime() - 365 * 86_400_000);
    const rows = await this.db.run<{ id: string; facts: Record<string, unknown>[]; sentenceChanges: number; recent: number; added: boolean }>(
      `UNWIND $ids AS id
       CALL (id) {
         OPTIONAL MATCH (:Article {id: id})-[:HAS_FACT]->(f:Fact)
         WHERE (f.validFrom > $from AND f.validFrom <= $to AND f.change IS NOT NULL AND f.change <> 'REFINED')
            OR (f.validTo > $from AND f.validTo <= $to AND NOT EXISTS { (f)-[:SUPERSEDED_BY]->(:Fact {change: 'REFINED'}) })
         RETURN collect(${FACT_FIELDS}) AS facts
       }
       CALL (id) {
         OPTIONAL MATCH (e:ChangeEvent {articleId: id})
         WHERE e.at > $from AND e.at <= $to AND e.kind IN ['SENTENCE_NEW', 'SENTENCE_CHANGED', 'SENTENCE_DELETED']
         RETURN count(e) AS sentenceChanges
       }
       CALL (id) {
         OPTIONAL MATCH (e:ChangeEvent {articleId: id, kind: 'ARTICLE_ADDED'})
         WHERE e.at <= $to
         WITH min(e.at) AS first
         RETURN first IS NOT NULL AND first > $from AS added
       }
       CALL (id) {
         OPTIONAL MATCH (e:ChangeEvent {articleId: id})
         WHERE e.at > $yearBefore AND e.at <= $asOf AND e.kind IN ['FACT_UPDATED', 'SENTENCE_CHANGED']
         RETURN count(e) AS recent
       }
       RETURN id, facts, sentenceChanges, recent, added`,
      {
        ids: articleIds,
        from: toNeo4jDateTime(window.from),
        to: toNeo4jDateTime(window.to),
        asOf: toNeo4jDateTime(asOf),
        yearBefore: toNeo4jDateTime(yearBefore),
      },
    );
    return new Map(
      rows.map((row) => [
        row.id,
        {
          changedFacts: row.facts.map(toFact),
          sentenceChanges: row.sentenceChanges,
          recentRevisions: row.recent,
          added: row.added,
        },
      ]),
    );
  }

  /**
   * The value the fact had before its current one: the predecessor across the last real update,
   * passing over REFINED versions (false changes restate the same value).
   */
  async previousFact(factId: string): Promise<FactRecord | null> {
    const rows = await this.db.run<{ item: Record<string, unknown> }>(
      `MATCH path = (f:Fact)-[:SUPERSEDED_BY*1..50]->(:Fact {id: $factId})
       WHERE nodes(path)[1].change = 'UPDATED' AND all(n IN nodes(path)[2..] WHERE n.change = 'REFINED')
       RETURN ${FACT_FIELDS} AS item ORDER BY length(path) LIMIT 1`,
      { factId },
    );
    return rows[0] ? toFact(rows[0].item) : null;
  }

  /** Facts valid at `asOf` with their predecessors and the passages valid then whose text holds the value. */
  async factsForQuestions(asOf: Date): Promise<FactForQuestions[]> {
    const rows = await this.db.run<{ item: Record<string, unknown>; title: string; previousValue: string | null; passageIds: string[] }>(
      `MATCH (a:Article)-[:HAS_FACT]->(f:Fact) WHERE ${validAtCypher('f')}
       OPTIONAL MATCH (previous:Fact)-[:SUPERSEDED_BY]->(f)
       CALL (a, f) {
         OPTIONAL MATCH (a)-[:HAS_PASSAGE]->(p:Passage) WHERE ${validAtCypher('p')} AND p.text CONTAINS f.value
         RETURN collect(p.id) AS passageIds
       }
       RETURN ${FACT_FIELDS} AS item, a.title AS title, previous.value AS previousValue, passageIds
       ORDER BY f.subject, f.attribute`,
      { asOf: toNeo4jDateTime(asOf) },
    );
    return rows.map((row) => ({ fact: toFact(row.item), title: row.title, previousValue: row.previousValue, passageIds: [...row.passageIds].sort() }));
  }
}
