import assert from 'node:assert/strict';
import type { CypherRunner } from '../../src/graph/database.js';
import type { Runtime } from '../../src/app/runtime.js';
import type { ArticleInput } from '../../src/ingest/snapshotReader.js';
import { day, resetKnowledge } from './runtime.js';

/**
 * What every fault test checks afterwards, on any store: the change feed has no gap or repeat,
 * no attribute or sentence has two current versions, and (to compare with an uninterrupted run)
 * what the store holds, independent of ids and timestamps.
 */
export async function changeFeedSeqs(db: CypherRunner): Promise<{ n: number; distinct: number; min: number | null; max: number | null }> {
  const [row] = await db.run<{ n: number; distinct: number; min: number | null; max: number | null }>(
    `MATCH (e:ChangeEvent) RETURN count(e) AS n, count(DISTINCT e.seq) AS distinct, min(e.seq) AS min, max(e.seq) AS max`,
  );
  return row!;
}

/** True when the feed's seqs are exactly 1..n. */
export async function changeFeedIsGapFree(db: CypherRunner): Promise<boolean> {
  const { n, distinct, min, max } = await changeFeedSeqs(db);
  return n === 0 || (distinct === n && min === 1 && max === n);
}

export async function currentDuplicates(db: CypherRunner): Promise<{ facts: number; sentences: number }> {
  const [facts] = await db.run<{ n: number }>(
    `MATCH (a:Article)-[:HAS_FACT]->(f:Fact) WHERE f.validTo IS NULL
     WITH a, f.attribute AS attribute, count(f) AS versions WHERE versions > 1 RETURN count(*) AS n`,
  );
  const [sentences] = await db.run<{ n: number }>(
    `MATCH (a:Article)-[:HAS_SENTENCE]->(s:Sentence) WHERE s.validTo IS NULL
     WITH a, s.text AS text, count(s) AS copies WHERE copies > 1 RETURN count(*) AS n`,
  );
  return { facts: facts!.n, sentences: sentences!.n };
}

/** What two runs must agree on to have given the same graph: events, nodes, versions with their validity, articles, snapshots, the change sequence. */
export async function storeFingerprint(db: CypherRunner): Promise<Record<string, unknown>> {
  return {
    events: await db.run(
      `MATCH (e:ChangeEvent) OPTIONAL MATCH (e)-[:CONCERNS]->(x)
       WITH e, coalesce(x.text, x.attribute + '=' + x.value) AS concern ORDER BY concern
       WITH e, collect(concern) AS concerns
       RETURN e.seq AS seq, e.kind AS kind, e.articleId AS article, e.snapshotId AS snapshot, concerns ORDER BY seq`,
    ),
    // Whether a unit is still PendingEmbedding depends on whether an embedding worker ran, not on the ingest.
    // A failed ingest leaves only its outcome (FailedIngest, for snapshot(id)), which is no knowledge.
    nodes: await db.run(
      `MATCH (n) WHERE NOT n:Migration AND NOT n:ApiKey AND NOT n:Lease AND NOT n:RetrievalState AND NOT n:RateUsage AND NOT n:FailedIngest
       RETURN [label IN labels(n) WHERE label <> 'PendingEmbedding'] AS labels, count(*) AS n ORDER BY n, labels`,
    ),
    current: await db.run(
      `MATCH (a:Article)-[:HAS_SENTENCE]->(s:Sentence) WHERE s.validTo IS NULL RETURN a.id AS article, s.text AS text ORDER BY article, s.orderKey`,
    ),
    versions: await db.run(
      `MATCH (a:Article)-[r:HAS_SENTENCE|HAS_FACT|HAS_PASSAGE]->(v)
       OPTIONAL MATCH (v)-[link:REVISED_AS|SUPERSEDED_BY]->(next)
       RETURN v.id AS id, type(r) AS kind, toString(v.validFrom) AS validFrom, toString(v.validTo) AS validTo,
              v.closedAt IS NOT NULL AS closed, v.searchText AS searchText, v.validFromKey AS validFromKey,
              v.validToKey AS validToKey, next.id AS next ORDER BY id, next`,
    ),
    articles: await db.run(
      `MATCH (a:Article) RETURN a.id AS id, a.title AS title, toString(a.validFrom) AS validFrom, toString(a.validTo) AS validTo,
              a.lastSnapshotId AS lastSnapshot ORDER BY id`,
    ),
    snapshots: await db.run(`MATCH (s:Snapshot) RETURN s.id AS id, s.status AS status, s.changeCount AS changes ORDER BY id`),
    sequence: await db.run(`MATCH (c:ChangeSequence {name: 'changes'}) RETURN c.value AS value`),
  };
}

/**
 * Empties `runtime`'s store and ingests `snapshots` into it with nothing going wrong: the
 * fingerprint a fault test's store must have had after its retries.
 */
export async function fingerprintOfCleanRun(
  runtime: Runtime,
  snapshots: ReadonlyArray<{ articles: ArticleInput[]; takenAt: Date }>,
): Promise<Record<string, unknown>> {
  await resetKnowledge(runtime);
  for (const { articles, takenAt } of snapshots) await runtime.services.ingest.ingest(articles, { takenAt, source: 'test' });
  return storeFingerprint(runtime.services.db);
}

/**
 * What every fault test ends with: a gap-free feed, one current version of each fact and
 * sentence, and the graph `cleanRun` gives (read after this store's own fingerprint, since a
 * clean run may empty this very store).
 */
export async function assertLikeCleanRun(db: CypherRunner, cleanRun: () => Promise<Record<string, unknown>>): Promise<void> {
  assert.ok(await changeFeedIsGapFree(db), 'the change feed is gap-free');
  assert.deepEqual(await currentDuplicates(db), { facts: 0, sentences: 0 });
  const afterFaults = await storeFingerprint(db);
  assert.deepEqual(afterFaults, await cleanRun(), 'the graph of an uninterrupted run');
}

/**
 * The store checks after a fault test's retries, against the same store emptied and given both
 * snapshots (2024-01-01 and 2024-02-01) cleanly: no second Neo4j to start.
 */
export function assertLikeCleanRunOnSameStore(runtime: Runtime, first: ArticleInput[], second: ArticleInput[]): Promise<void> {
  const snapshots = [
    { articles: first, takenAt: day('2024-01-01') },
    { articles: second, takenAt: day('2024-02-01') },
  ];
  return assertLikeCleanRun(runtime.services.db, () => fingerprintOfCleanRun(runtime, snapshots));
}
