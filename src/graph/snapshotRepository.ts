import { int, type CypherRunner } from './database.js';
import { SnapshotStatus, type SnapshotFailure, type SnapshotRecord } from '../domain/model.js';
import { fromNeo4jDateTime, requireDate, toNeo4jDateTime } from './temporal.js';

const SNAPSHOT_FIELDS = `s {.id, .takenAt, .recordedAt, .source, .status, .complete, .contentHash, .articleCount, .changeCount, .completedAt, .failureCode, .failureMessage}`;

type SnapshotRow = { snapshot: Record<string, unknown> };

function toSnapshot(row: Record<string, unknown>): SnapshotRecord {
  return {
    id: row.id as string,
    takenAt: requireDate(row.takenAt),
    recordedAt: requireDate(row.recordedAt),
    source: (row.source as string | null) ?? '',
    status: row.status as SnapshotStatus,
    complete: Boolean(row.complete),
    contentHash: row.contentHash as string,
    articleCount: (row.articleCount as number | null) ?? 0,
    changeCount: (row.changeCount as number | null) ?? 0,
    completedAt: fromNeo4jDateTime(row.completedAt),
    failure: typeof row.failureCode === 'string' ? { code: row.failureCode, message: String(row.failureMessage) } : null,
  };
}

export class SnapshotRepository {
  constructor(private readonly db: CypherRunner) {}

  async list(): Promise<SnapshotRecord[]> {
    const rows = await this.db.run<SnapshotRow>(`MATCH (s:Snapshot) RETURN ${SNAPSHOT_FIELDS} AS snapshot ORDER BY s.takenAt`);
    return rows.map((row) => toSnapshot(row.snapshot));
  }

  async latest(): Promise<SnapshotRecord | null> {
    const rows = await this.db.run<SnapshotRow>(`MATCH (s:Snapshot) RETURN ${SNAPSHOT_FIELDS} AS snapshot ORDER BY s.takenAt DESC LIMIT 1`);
    return rows[0] ? toSnapshot(rows[0].snapshot) : null;
  }

  /**
   * The snapshot with this id: a stored one, or one whose ingest was rolled back (FAILED, kept
   * apart from the stored ones so that only its outcome remains); null when there is neither.
   */
  async find(id: string): Promise<SnapshotRecord | null> {
    const rows = await this.db.run<SnapshotRow>(
      `OPTIONAL MATCH (stored:Snapshot {id: $id})
       OPTIONAL MATCH (failed:FailedIngest {id: $id})
       WITH coalesce(stored, failed) AS s WHERE s IS NOT NULL
       RETURN ${SNAPSHOT_FIELDS} AS snapshot`,
      { id },
    );
    return rows[0] ? toSnapshot(rows[0].snapshot) : null;
  }

  /** Creates the snapshot in INGESTING state, or returns the one already there with this id; an earlier failed run of it is forgotten. */
  async begin(snapshot: { id: string; takenAt: Date; source: string; complete: boolean; contentHash: string; articleCount: number }): Promise<SnapshotRecord> {
    const rows = await this.db.run<SnapshotRow>(
      `OPTIONAL MATCH (failed:FailedIngest {id: $id})
       DETACH DELETE failed
       WITH count(*) AS forgotten
       MERGE (s:Snapshot {id: $id})
       ON CREATE SET s.takenAt = $takenAt, s.recordedAt = datetime(), s.source = $source, s.status = $status,
                     s.complete = $complete, s.contentHash = $contentHash, s.articleCount = $articleCount, s.changeCount = 0
       RETURN ${SNAPSHOT_FIELDS} AS snapshot`,
      {
        ...snapshot,
        articleCount: int(snapshot.articleCount),
        takenAt: toNeo4jDateTime(snapshot.takenAt),
        status: SnapshotStatus.INGESTING,
      },
    );
    return toSnapshot(rows[0]!.snapshot);
  }

  /**
   * Flags a snapshot as being rolled back, with why, before anything of it is undone: an
   * interrupted rollback is then finished by the next ingest rather than resumed as an ingest,
   * and keeps the first reason given.
   */
  async markRollingBack(id: string, failure: SnapshotFailure): Promise<void> {
    await this.db.run(
      `MATCH (s:Snapshot {id: $id})
       SET s.rollingBack = true, s.failureCode = coalesce(s.failureCode, $code), s.failureMessage = coalesce(s.failureMessage, $message)`,
      { id, ...failure },
    );
  }

  /** The snapshot whose rollback was interrupted, if any. */
  async rollingBack(): Promise<SnapshotRecord | null> {
    const rows = await this.db.run<SnapshotRow>(`MATCH (s:Snapshot) WHERE s.rollingBack RETURN ${SNAPSHOT_FIELDS} AS snapshot LIMIT 1`);
    return rows[0] ? toSnapshot(rows[0].snapshot) : null;
  }

  /**
   * Takes a snapshot whose writes were undone out of the stored ones, keeping it as a
   * FailedIngest with the reason it was rolled back (what `find` reports), and sets the change
   * sequence back to the last event kept, so the next snapshot's events follow it with no gap; the
   * sequence remembers the highest number it ever handed out, so a resume point past the counter
   * is known to have been withdrawn. When the snapshot had written versions, the native vector
   * indexes of every process rebuild from Neo4j (a new storeId): they cannot reopen the versions
   * it had closed, nor drop its deleted ones, in place.
   */
  async discard(id: string, hadWritten: boolean): Promise<void> {
    await this.db.run(
      `MATCH (s:Snapshot {id: $id})
       OPTIONAL MATCH (earlier:FailedIngest {id: $id})
       DETACH DELETE earlier
       REMOVE s:Snapshot, s.rollingBack
       SET s:FailedIngest, s.status = $failed
       WITH count(*) AS discarded
       MATCH (c:ChangeSequence {name: 'changes'})
       OPTIONAL MATCH (e:ChangeEvent)
       WITH c, max(e.seq) AS last
       SET c.highest = CASE WHEN coalesce(c.highest, 0) > c.value THEN c.highest ELSE c.value END,
           c.value = coalesce(last, 0)
       WITH count(*) AS rewound
       OPTIONAL MATCH (r:RetrievalState {name: 'vectors'}) WHERE $hadWritten
       SET r.storeId = randomUUID()`,
      { id, hadWritten, failed: SnapshotStatus.FAILED },
    );
  }

  async finish(id: string): Promise<SnapshotRecord> {
    const rows = await this.db.run<SnapshotRow>(
      `MATCH (s:Snapshot {id: $id})
       OPTIONAL MATCH (e:ChangeEvent {snapshotId: $id})
       WITH s, count(e) AS changeCount
       SET s.status = $status, s.changeCount = changeCount, s.completedAt = datetime()
       RETURN ${SNAPSHOT_FIELDS} AS snapshot`,
      { id, status: SnapshotStatus.COMPLETE },
    );
    return toSnapshot(rows[0]!.snapshot);
  }
}
