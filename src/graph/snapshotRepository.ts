import { int, type CypherRunner } from './database.js';
import { SnapshotStatus, type SnapshotRecord } from '../domain/model.js';
import { requireDate, toNeo4jDateTime } from './temporal.js';

const SNAPSHOT_FIELDS = `s {.id, .takenAt, .recordedAt, .source, .status, .complete, .contentHash, .articleCount, .changeCount}`;

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
  };
}

export class SnapshotRepository {
  constructor(private readonly db: CypherRunner) {}

  async list(): Promise<SnapshotRecord[]> {
    const rows = await this.db.run<SnapshotRow>(`MATCH (s:Snapshot) RETURN ${SNAPSHOT_FIELDS} AS snapshot ORDER BY s.takenAt`);
    return rows.map((row) => toSnapshot(row.snapshot));
  }

  async latest(): Promise<SnapshotRecord | null> {
    const rows = await this.db.run<SnapshotRow>(
      `MATCH (s:Snapshot) RETURN ${SNAPSHOT_FIELDS} AS snapshot ORDER BY s.takenAt DESC LIMIT 1`,
    );
    return rows[0] ? toSnapshot(rows[0].snapshot) : null;
  }

  /** Creates the snapshot in INGESTING state, or returns the one already there with this id. */
  async begin(snapshot: {
    id: string;
    takenAt: Date;
    source: string;
    complete: boolean;
    contentHash: string;
    articleCount: number;
  }): Promise<SnapshotRecord> {
    const rows = await this.db.run<SnapshotRow>(
      `MERGE (s:Snapshot {id: $id})
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
   * Flags a snapshot as being rolled back, before anything of it is undone: an interrupted
   * rollback is then finished by the next ingest rather than resumed as an ingest.
   */
  async markRollingBack(id: string): Promise<void> {
    await this.db.run(`MATCH (s:Snapshot {id: $id}) SET s.rollingBack = true`, { id });
  }

  /** The snapshot whose rollback was interrupted, if any. */
  async rollingBack(): Promise<SnapshotRecord | null> {
    const rows = await this.db.run<SnapshotRow>(`MATCH (s:Snapshot) WHERE s.rollingBack RETURN ${SNAPSHOT_FIELDS} AS snapshot LIMIT 1`);
    return rows[0] ? toSnapshot(rows[0].snapshot) : null;
  }

  /**
   * Deletes a snapshot whose writes were undone, and sets the change sequence back to the last
   * event kept, so the next snapshot's events follow it with no gap; the sequence remembers the
   * highest number it ever handed out, so a resume point past the counter is known to have been
   * withdrawn. When the snapshot had
   * written versions, the native vector indexes of every process rebuild from Neo4j (a new
   * storeId): they cannot reopen the versions it had closed, nor drop its deleted ones, in place.
   */
  async discard(id: string, hadWritten: boolean): Promise<void> {
    await this.db.run(
      `MATCH (s:Snapshot {id: $id}) DETACH DELETE s
       WITH count(*) AS discarded
       MATCH (c:ChangeSequence {name: 'changes'})
       OPTIONAL MATCH (e:ChangeEvent)
       WITH c, max(e.seq) AS last
       SET c.highest = CASE WHEN coalesce(c.highest, 0) > c.value THEN c.highest ELSE c.value END,
           c.value = coalesce(last, 0)
       WITH count(*) AS rewound
       OPTIONAL MATCH (r:RetrievalState {name: 'vectors'}) WHERE $hadWritten
       SET r.storeId = randomUUID()`,
      { id, hadWritten },
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
