import type { ArticlePlan, ArticleState, PlannedChange } from '../domain/plan.js';
import { closeVersionCypher, currentVersionCypher, openUnitKeysCypher, reopenVersionCypher } from './validity.js';
import { int, type CypherRunner } from './database.js';
import { ChangeKind } from '../domain/model.js';
import { toNeo4jDateTime } from './temporal.js';
import type { EventTime } from '../domain/model.js';
import { eventTimeProperties } from './eventTimeProperties.js';

/** The snapshot a batch belongs to. */
export interface SnapshotContext {
  id: string;
  takenAt: Date;
}

/**
 * What BM25 indexes for a sentence or passage (`searchText`): its article's title, then its
 * text. A passage often names its subject only in the article's title ("Herbert Hainer has been
 * club president since 2019"); with the title it is found by "president of FC Bayern Munich".
 * Migration 009 fills it for units written before, with the same expression.
 */
function searchTextCypher(article: string, text: string): string {
  return `CASE WHEN coalesce(${article}.title, '') = '' THEN ${text} ELSE ${article}.title + '\n' + ${text} END`;
}

/**
 * The article's own fields before a snapshot overwrites them (versions keep their history, the
 * article node does not), so that a snapshot that fails part-way can be rolled back. Set before
 * every write of an article; only those of the snapshot being rolled back are read.
 */
const KEEP_PRIOR_STATE = 'a.priorTitle = a.title, a.priorSnapshotId = a.lastSnapshotId, a.priorValidTo = a.validTo';

/**
 * A version to create as its node stores it: its event times as the properties of
 * graph/eventTimeProperties.ts, the list itself left out (the driver skips undefined values).
 * Object.assign, not rest and spread: 3 µs a version against 18.
 */
function storedVersion(version: { eventTimes: EventTime[] }): Record<string, unknown> {
  return Object.assign({}, version, eventTimeProperties(version.eventTimes), { eventTimes: undefined });
}

type StateRow = {
  id: string;
  exists: boolean;
  title: string | null;
  lastSnapshotId: string | null;
  sentences: Array<{ id: string; text: string; startsParagraph: boolean; orderKey: string }>;
  facts: Array<{ id: string; attribute: string; value: string }>;
  passages: Array<{ id: string; text: string }>;
};

/** Writes of the ingest pipeline. Each method runs inside the caller's transaction. */
export class IngestRepository {
  constructor(private readonly tx: CypherRunner) {}

  /** The current (open-ended) versions of each article, and which snapshot last touched it. */
  async loadStates(articleIds: string[]): Promise<Map<string, ArticleState & { lastSnapshotId: string | null }>> {
    const rows = await this.tx.run<StateRow>(
      `UNWIND $ids AS id
       OPTIONAL MATCH (a:Article {id: id})
       CALL (a) {
         OPTIONAL MATCH (a)-[:HAS_SENTENCE]->(s:Sentence) WHERE ${currentVersionCypher('s')}
         WITH s ORDER BY s.orderKey
         RETURN collect(s {.id, .text, .startsParagraph, .orderKey}) AS sentences
       }
       CALL (a) {
         OPTIONAL MATCH (a)-[:HAS_FACT]->(f:Fact) WHERE ${currentVersionCypher('f')}
         RETURN collect(f {.id, .attribute, .value}) AS facts
       }
       CALL (a) {
         OPTIONAL MATCH (a)-[:HAS_PASSAGE]->(p:Passage) WHERE ${currentVersionCypher('p')}
         RETURN collect(p {.id, .text}) AS passages
       }
       RETURN id, a IS NOT NULL AND ${currentVersionCypher('a')} AS exists, a.title AS title,
              a.lastSnapshotId AS lastSnapshotId, sentences, facts, passages`,
      { ids: articleIds },
    );
    return new Map(rows.map((row) => [row.id, row]));
  }

  /** Hands out `count` gap-free sequence numbers; the counter stays locked until commit. */
  private async allocateSequence(count: number): Promise<number> {
    if (count === 0) return 0;
    const rows = await this.tx.run<{ base: number }>(
      `MATCH (c:ChangeSequence {name: 'changes'})
       SET c.value = c.value + $count
       RETURN c.value - $count AS base`,
      { count: int(count) },
    );
    if (!rows[0]) throw new Error('the change sequence is missing: run `chronoql migrate`');
    return rows[0].base;
  }

  /** Writes the plans of one batch with their change events; returns how many events. */
  async writePlans(snapshot: SnapshotContext, plans: ArticlePlan[]): Promise<number> {
    const params = { snapshotId: snapshot.id, at: toNeo4jDateTime(snapshot.takenAt) };
    const renamed = await this.tx.run<{ id: string }>(
      `UNWIND $articles AS row
       MERGE (a:Article {id: row.id})
       ON CREATE SET a.validFrom = $at, a.recordedAt = datetime()
       WITH a, row, a.title IS NOT NULL AND a.title <> row.title AS renamed
       SET ${KEEP_PRIOR_STATE}
       SET a.title = row.title, a.lastSnapshotId = $snapshotId, a.validTo = null
       WITH a WHERE renamed
       RETURN a.id AS id`,
      { ...params, articles: plans.map((plan) => ({ id: plan.articleId, title: plan.title })) },
    );
    await this.closeVersions(
      plans.flatMap((plan) => plan.closeSentenceIds),
      'Sentence',
      params.at,
    );
    await this.closeVersions(
      plans.flatMap((plan) => plan.closeFactIds),
      'Fact',
      params.at,
    );
    await this.closeVersions(
      plans.flatMap((plan) => plan.closePassageIds),
      'Passage',
      params.at,
    );
    // Versions that remain valid are searched under the new title; closed ones keep the title of their time.
    await this.tx.run(
      `UNWIND $ids AS id
       MATCH (a:Article {id: id})-[:HAS_SENTENCE|HAS_PASSAGE]->(u) WHERE ${currentVersionCypher('u')}
       SET u.searchText = ${searchTextCypher('a', 'u.text')}`,
      { ids: renamed.map((row) => row.id) },
    );
    await this.tx.run(
      `UNWIND $sentences AS row
       MATCH (a:Article {id: row.articleId})
       CREATE (a)-[:HAS_SENTENCE]->(s:Sentence:PendingEmbedding)
       SET s = row, s.validFrom = $at, s.recordedAt = datetime(), s.searchText = ${searchTextCypher('a', 'row.text')}, ${openUnitKeysCypher('s', '$at')}`,
      { ...params, sentences: plans.flatMap((plan) => plan.createSentences.map(storedVersion)) },
    );
    await this.tx.run(
      `UNWIND $facts AS row
       MATCH (a:Article {id: row.subject})
       CREATE (a)-[:HAS_FACT]->(f:Fact)
       SET f = row, f.validFrom = $at, f.recordedAt = datetime()`,
      { ...params, facts: plans.flatMap((plan) => plan.createFacts.map(storedVersion)) },
    );
    await this.tx.run(
      `UNWIND $passages AS row
       MATCH (a:Article {id: row.articleId})
       CREATE (a)-[:HAS_PASSAGE]->(p:Passage:PendingEmbedding)
       SET p = row, p.validFrom = $at, p.recordedAt = datetime(), p.searchText = ${searchTextCypher('a', 'row.text')}, ${openUnitKeysCypher('p', '$at')}`,
      { ...params, passages: plans.flatMap((plan) => plan.createPassages.map(storedVersion)) },
    );
    await this.link(
      'Sentence',
      'REVISED_AS',
      plans.flatMap((plan) => plan.sentenceRevisions),
    );
    await this.link(
      'Fact',
      'SUPERSEDED_BY',
      plans.flatMap((plan) => plan.factSupersessions),
    );
    const changes = plans.flatMap((plan) => plan.changes);
    await this.writeChanges(snapshot, changes, await this.allocateSequence(changes.length));
    return changes.length;
  }

  /**
   * Closes every article that a complete snapshot no longer lists, with its sentences and
   * facts, and records one ARTICLE_REMOVED change for each.
   */
  async removeArticlesMissingFrom(snapshot: SnapshotContext, presentIds: string[]): Promise<number> {
    const at = toNeo4jDateTime(snapshot.takenAt);
    const removed = await this.tx.run<{ id: string }>(
      `MATCH (a:Article) WHERE ${currentVersionCypher('a')} AND NOT a.id IN $presentIds
       SET ${KEEP_PRIOR_STATE}
       SET a.validTo = $at, a.lastSnapshotId = $snapshotId
       WITH a
       OPTIONAL MATCH (a)-[:HAS_SENTENCE|HAS_FACT|HAS_PASSAGE]->(v) WHERE ${currentVersionCypher('v')}
       SET ${closeVersionCypher('v', '$at')}
       RETURN DISTINCT a.id AS id`,
      { presentIds, at, snapshotId: snapshot.id },
    );
    const changes: PlannedChange[] = removed.map(({ id }) => ({
      kind: ChangeKind.ARTICLE_REMOVED,
      articleId: id,
      sentenceId: null,
      previousSentenceId: null,
      factId: null,
      previousFactId: null,
    }));
    await this.writeChanges(snapshot, changes, await this.allocateSequence(changes.length));
    return changes.length;
  }

  /**
   * Undoes what snapshot `snapshot` wrote to up to `limit` of its articles: deletes the versions it
   * created (and with them their links), reopens those it closed, and gives each article back its
   * title, validity and last snapshot, or deletes it when the snapshot created it. Returns how
   * many articles it undid; none are left once it returns 0. The snapshot's change events must
   * be gone first (deleteChangeEvents): they point at the versions.
   */
  async undoArticles(snapshot: SnapshotContext, limit: number): Promise<number> {
    const rows = await this.tx.run<{ undone: number }>(
      `MATCH (a:Article {lastSnapshotId: $snapshotId}) WITH a LIMIT $limit
       CALL (a) {
         OPTIONAL MATCH (a)-[:HAS_SENTENCE|HAS_FACT|HAS_PASSAGE]->(v) WHERE v.validFrom = $at
         DETACH DELETE v
       }
       CALL (a) {
         OPTIONAL MATCH (a)-[:HAS_SENTENCE|HAS_FACT|HAS_PASSAGE]->(v) WHERE v.validTo = $at
         SET ${reopenVersionCypher('v')} REMOVE v.closedAt
       }
       WITH a, a.validFrom = $at AS created
       CALL (a, created) {
         WITH a, created WHERE created
         DETACH DELETE a
       }
       CALL (a, created) {
         WITH a, created WHERE NOT created
         SET a.title = a.priorTitle, a.lastSnapshotId = a.priorSnapshotId, a.validTo = a.priorValidTo
         REMOVE a.priorTitle, a.priorSnapshotId, a.priorValidTo
         WITH a
         MATCH (a)-[:HAS_SENTENCE|HAS_PASSAGE]->(u) WHERE ${currentVersionCypher('u')}
         SET u.searchText = ${searchTextCypher('a', 'u.text')}
       }
       RETURN count(*) AS undone`,
      { snapshotId: snapshot.id, at: toNeo4jDateTime(snapshot.takenAt), limit: int(limit) },
    );
    return rows[0]?.undone ?? 0;
  }

  /** Deletes up to `limit` change events of a snapshot; returns how many. */
  async deleteChangeEvents(snapshotId: string, limit: number): Promise<number> {
    const rows = await this.tx.run<{ deleted: number }>(
      `MATCH (e:ChangeEvent {snapshotId: $snapshotId}) WITH e LIMIT $limit DETACH DELETE e RETURN count(*) AS deleted`,
      { snapshotId, limit: int(limit) },
    );
    return rows[0]?.deleted ?? 0;
  }

  /** Ends the valid time of versions; closedAt (transaction time) lets vector indexes catch up. */
  private async closeVersions(ids: string[], label: 'Sentence' | 'Fact' | 'Passage', at: unknown): Promise<void> {
    if (ids.length === 0) return;
    await this.tx.run(`UNWIND $ids AS id MATCH (v:${label} {id: id}) SET ${closeVersionCypher('v', '$at')}`, { ids, at });
  }

  private async link(label: 'Sentence' | 'Fact', type: 'REVISED_AS' | 'SUPERSEDED_BY', links: Array<{ from: string; to: string }>): Promise<void> {
    if (links.length === 0) return;
    await this.tx.run(
      `UNWIND $links AS link
       MATCH (old:${label} {id: link.from}), (new:${label} {id: link.to})
       CREATE (old)-[:${type}]->(new)`,
      { links },
    );
  }

  private async writeChanges(snapshot: SnapshotContext, changes: PlannedChange[], firstSeq: number): Promise<void> {
    if (changes.length === 0) return;
    const rows = changes.map((change, offset) => ({ ...change, seq: int(firstSeq + offset + 1) }));
    await this.tx.run(
      `UNWIND $rows AS row
       CREATE (e:ChangeEvent)
       SET e = row, e.snapshotId = $snapshotId, e.at = $at, e.recordedAt = datetime()
       WITH e, row
       CALL (e, row) {
         UNWIND [row.sentenceId, row.previousSentenceId] AS sentenceId
         MATCH (s:Sentence {id: sentenceId})
         CREATE (e)-[:CONCERNS]->(s)
       }
       CALL (e, row) {
         UNWIND [row.factId, row.previousFactId] AS factId
         MATCH (f:Fact {id: factId})
         CREATE (e)-[:CONCERNS]->(f)
       }`,
      { rows, snapshotId: snapshot.id, at: toNeo4jDateTime(snapshot.takenAt) },
    );
  }
}
