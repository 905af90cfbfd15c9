import type { CypherRunner, Database } from '../graph/database.js';
import { IngestRepository } from '../graph/ingestRepository.js';
import { SnapshotRepository } from '../graph/snapshotRepository.js';
import type { SnapshotFailure, SnapshotRecord } from '../domain/model.js';

/** Few enough that an article at the size limits (ingest/inputLimits.ts) fits many times in one transaction. */
const ARTICLES_PER_TRANSACTION = 20;
const EVENTS_PER_TRANSACTION = 10_000;

export interface RollbackReport {
  /** Articles the snapshot had written (and that are now as before it, or gone when it created them). */
  articles: number;
  changeEvents: number;
}

/**
 * Undoes everything a snapshot wrote and takes it out of the stored snapshots, in small
 * transactions, each of which first calls `guard` (the caller's hold on the ingest lease). The
 * snapshot is flagged first, with `failure` (why it is rolled back, what `snapshot(id)` reports
 * afterwards): if this is interrupted, the next ingest or abandon finishes it (`resumed` then
 * says so). Afterwards the store is as if the snapshot had never been ingested, its change
 * events included.
 */
export async function rollBackSnapshot(
  db: Database,
  snapshot: SnapshotRecord,
  guard: (tx: CypherRunner) => Promise<void>,
  failure: SnapshotFailure,
  resumed = false,
): Promise<RollbackReport> {
  const snapshots = new SnapshotRepository(db);
  await snapshots.markRollingBack(snapshot.id, failure);
  const context = { id: snapshot.id, takenAt: snapshot.takenAt };
  const repeat = async (step: (repository: IngestRepository) => Promise<number>): Promise<number> => {
    let total = 0;
    for (;;) {
      const done = await db.writeTransaction(async (tx) => {
        await guard(tx);
        return step(new IngestRepository(tx));
      });
      if (done === 0) return total;
      total += done;
    }
  };
  // Events first: they point at the versions that are deleted next.
  const changeEvents = await repeat((repository) => repository.deleteChangeEvents(snapshot.id, EVENTS_PER_TRANSACTION));
  const articles = await repeat((repository) => repository.undoArticles(context, ARTICLES_PER_TRANSACTION));
  await snapshots.discard(snapshot.id, resumed || changeEvents + articles > 0);
  return { articles, changeEvents };
}
