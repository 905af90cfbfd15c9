import { SentenceLabel, type SentenceRecord, type SnapshotRecord } from '../domain/model.js';

/** The snapshot in effect at asOf: the latest one taken at or before it. */
export function snapshotInEffect(snapshots: readonly SnapshotRecord[], asOf: Date): SnapshotRecord | null {
  let inEffect: SnapshotRecord | null = null;
  for (const snapshot of snapshots) {
    if (snapshot.takenAt.getTime() <= asOf.getTime()) inEffect = snapshot;
  }
  return inEffect;
}

/**
 * A sentence's label relative to the article's previous snapshot, as seen in `snapshot`: the
 * label it was created with if that snapshot created it, UNCHANGED if it was carried over.
 */
export function labelInSnapshot(sentence: SentenceRecord, snapshot: SnapshotRecord | null): SentenceLabel | null {
  if (snapshot && sentence.validFrom.getTime() === snapshot.takenAt.getTime()) return sentence.origin;
  return SentenceLabel.UNCHANGED;
}
