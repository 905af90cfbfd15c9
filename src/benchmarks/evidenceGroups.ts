/**
 * Which sentences of a snapshot a benchmark item is drafted from (GrowOVER-QA, section 3.1 and
 * Appendix C). In an article's first snapshot: paragraphs of fewer than 5 sentences and
 * 300–600 characters, clustered with the encoder into at most 4 groups by k-means, one
 * paragraph per cluster. In a later snapshot: runs of NEW sentences (a run longer than 6 is
 * split) and each CHANGED sentence.
 */
import { kmeans } from 'ml-kmeans';
import type { SnapshotSentence } from '../graph/benchmarkRepository.js';

/** A sentence of the article as the snapshot holds it. */
export type GroupSentence = SnapshotSentence;

/** Sentences one item is drafted from, with the type the item gets. */
export interface EvidenceGroup<S extends GroupSentence = GroupSentence> {
  /** Stable within the article and snapshot: the position of the group's first sentence. */
  key: string;
  type: 'NEW' | 'CHANGED';
  sentences: S[];
}

export const PARAGRAPH_MAX_SENTENCES = 4;
export const PARAGRAPH_MIN_CHARS = 300;
export const PARAGRAPH_MAX_CHARS = 600;
export const MAX_CLUSTERS = 4;
export const MAX_NEW_RUN = 6;
/** k-means starts from the same seed every time, so the same article always yields the same items. */
export const CLUSTER_SEED = 20;

export function paragraphsOf<S extends GroupSentence>(sentences: readonly S[]): Array<{ start: number; sentences: S[] }> {
  const paragraphs: Array<{ start: number; sentences: S[] }> = [];
  sentences.forEach((sentence, index) => {
    if (sentence.startsParagraph || paragraphs.length === 0) paragraphs.push({ start: index, sentences: [] });
    paragraphs[paragraphs.length - 1]!.sentences.push(sentence);
  });
  return paragraphs;
}

/** GrowOVER's candidate paragraphs: short enough for one question, long enough to say something. */
export function isCandidateParagraph(sentences: readonly GroupSentence[]): boolean {
  const length = sentences.map((sentence) => sentence.text).join(' ').length;
  return sentences.length > 0 && sentences.length <= PARAGRAPH_MAX_SENTENCES && length >= PARAGRAPH_MIN_CHARS && length <= PARAGRAPH_MAX_CHARS;
}

/**
 * Indices of the chosen rows: k-means (k-means++ from a fixed seed) over unit-length vectors
 * into at most `clusters` groups, and from each group the row nearest its centroid, in row order.
 */
export function onePerCluster(vectors: readonly Float32Array[], clusters = MAX_CLUSTERS): number[] {
  if (vectors.length <= clusters) return vectors.map((_, index) => index);
  const data = vectors.map((vector) => Array.from(vector));
  const result = kmeans(data, clusters, { seed: CLUSTER_SEED, initialization: 'kmeans++', maxIterations: 100 });
  const chosen = new Map<number, { index: number; distance: number }>();
  result.clusters.forEach((cluster, index) => {
    const centroid = result.centroids[cluster]!;
    const distance = data[index]!.reduce((sum, value, d) => sum + (value - centroid[d]!) ** 2, 0);
    const best = chosen.get(cluster);
    if (!best || distance < best.distance) chosen.set(cluster, { index, distance });
  });
  return [...chosen.values()].map(({ index }) => index).sort((a, b) => a - b);
}

/** Runs of consecutive NEW sentences created by this snapshot, each split into pieces of at most MAX_NEW_RUN. */
export function newSentenceRuns<S extends GroupSentence>(sentences: readonly S[]): Array<EvidenceGroup<S>> {
  const groups: Array<EvidenceGroup<S>> = [];
  let run: Array<{ sentence: S; index: number }> = [];
  const flush = (): void => {
    // Even pieces: a run of 7 becomes 4 + 3, not 6 + 1.
    const pieces = Math.ceil(run.length / MAX_NEW_RUN);
    const size = Math.ceil(run.length / Math.max(1, pieces));
    for (let start = 0; start < run.length; start += size) {
      const piece = run.slice(start, start + size);
      groups.push({ key: `n${piece[0]!.index}`, type: 'NEW', sentences: piece.map(({ sentence }) => sentence) });
    }
    run = [];
  };
  sentences.forEach((sentence, index) => {
    if (sentence.createdHere && sentence.origin === 'NEW') run.push({ sentence, index });
    else flush();
  });
  flush();
  return groups;
}

/** Each CHANGED sentence created by this snapshot, on its own. */
export function changedSentences<S extends GroupSentence>(sentences: readonly S[]): Array<EvidenceGroup<S>> {
  return sentences.flatMap((sentence, index) =>
    sentence.createdHere && sentence.origin === 'CHANGED' ? [{ key: `c${index}`, type: 'CHANGED' as const, sentences: [sentence] }] : [],
  );
}

/** Whether the article first appears in this snapshot: its sentences carry no label. */
export function isFirstSnapshot(sentences: readonly GroupSentence[]): boolean {
  return sentences.length > 0 && sentences.every((sentence) => sentence.createdHere && sentence.origin === null);
}
