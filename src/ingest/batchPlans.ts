/**
 * A batch of a snapshot's articles planned from what is committed: the ingest plans the next batch
 * while Neo4j writes the current one (ingestService.ts).
 */
import type { ArticlePlan } from '../domain/plan.js';
import type { Database } from '../graph/database.js';
import { IngestRepository } from '../graph/ingestRepository.js';
import { planArticle } from './articlePlan.js';
import type { SentenceLabeler } from './sentenceLabeler.js';
import type { ArticleInput } from './snapshotReader.js';

export interface PreparedBatch {
  plans: ArticlePlan[];
  /** Articles an interrupted run of the same snapshot had written already. */
  resumed: number;
}

/**
 * A batch's plans, from its articles' current versions as committed. They are read in a write
 * transaction so that a cluster routes the read to its leader, which has every batch and
 * snapshot committed before. Articles an interrupted run of this snapshot wrote are skipped.
 */
export async function prepareBatch(db: Database, labeler: SentenceLabeler, batch: readonly ArticleInput[], snapshotId: string): Promise<PreparedBatch> {
  const states = await db.writeTransaction((tx) => new IngestRepository(tx).loadStates(batch.map((article) => article.id)));
  const plans: ArticlePlan[] = [];
  let resumed = 0;
  for (const article of batch) {
    const state = states.get(article.id)!;
    if (state.lastSnapshotId === snapshotId) resumed += 1;
    else plans.push(await planArticle(state, article, snapshotId, labeler));
  }
  return { plans, resumed };
}

/** Whether two batches name an article in common: the second is then planned only once the first has committed. */
export function sharesArticle(a: readonly ArticleInput[], b: readonly ArticleInput[]): boolean {
  const ids = new Set(a.map((article) => article.id));
  return b.some((article) => ids.has(article.id));
}

/** A promise awaited later: its failure is not unhandled meanwhile, and still rejects whoever awaits it. */
export function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
