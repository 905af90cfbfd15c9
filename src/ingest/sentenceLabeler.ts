import type { PreviousSentence } from '../domain/plan.js';
import { normalizeSentence, type SplitSentence } from './sentenceSplitter.js';

/**
 * How one sentence of the new snapshot relates to the previous one (GrowOVER labels).
 * KEPT and RELOCATED are both labeled UNCHANGED; RELOCATED text moved or changed paragraph
 * and so needs a new version node to keep each snapshot's order answerable.
 */
export type SentenceAlignment =
  | { kind: 'KEPT'; previousId: string }
  | { kind: 'RELOCATED'; previousId: string; mergedIds?: string[] }
  | { kind: 'CHANGED'; previousId: string; mergedIds?: string[] }
  | { kind: 'NEW'; confident?: boolean };

export interface SentenceLabeling {
  /** One entry per sentence of the new snapshot, in order. */
  alignments: SentenceAlignment[];
  /** Previous sentences with no successor: DELETED. */
  deletedIds: string[];
}

/** Labels an article's new sentences against its previous ones (exact match, or GrowOVER's method). */
export interface SentenceLabeler {
  readonly name: string;
  label(previous: readonly PreviousSentence[], current: readonly SplitSentence[]): SentenceLabeling | Promise<SentenceLabeling>;
}

/** What identical text settles: kept sentences (in order), moved ones, and the gaps left between them. */
export interface IdenticalMatches {
  alignments: Array<SentenceAlignment | undefined>;
  oldTaken: boolean[];
  /** [oldIndex, newIndex] bounds around each gap, from [-1, -1] to [previous.length, current.length]. */
  bounds: Array<[number, number]>;
}

/**
 * Sentences whose normalised text is the same are UNCHANGED: aligned by longest common
 * subsequence so order is kept (KEPT, or RELOCATED when the paragraph role changed), and text
 * that moved elsewhere in the article is RELOCATED.
 */
export function matchIdentical(previous: readonly PreviousSentence[], current: readonly SplitSentence[]): IdenticalMatches {
  const oldKeys = previous.map((sentence) => normalizeSentence(sentence.text));
  const newKeys = current.map((sentence) => normalizeSentence(sentence.text));
  const alignments: Array<SentenceAlignment | undefined> = new Array(current.length);
  const oldTaken = new Array<boolean>(previous.length).fill(false);
  const anchors = longestCommonSubsequence(oldKeys, newKeys);
  for (const [oldIndex, newIndex] of anchors) {
    const old = previous[oldIndex]!;
    const sameParagraphRole = old.startsParagraph === current[newIndex]!.startsParagraph;
    alignments[newIndex] = { kind: sameParagraphRole ? 'KEPT' : 'RELOCATED', previousId: old.id };
    oldTaken[oldIndex] = true;
  }
  const untakenOldByText = new Map<string, number[]>();
  oldKeys.forEach((key, oldIndex) => {
    if (!oldTaken[oldIndex]) untakenOldByText.set(key, [...(untakenOldByText.get(key) ?? []), oldIndex]);
  });
  newKeys.forEach((key, newIndex) => {
    if (alignments[newIndex]) return;
    const oldIndex = untakenOldByText.get(key)?.shift();
    if (oldIndex === undefined) return;
    alignments[newIndex] = { kind: 'RELOCATED', previousId: previous[oldIndex]!.id };
    oldTaken[oldIndex] = true;
  });
  return { alignments, oldTaken, bounds: [[-1, -1], ...anchors, [previous.length, current.length]] };
}

/** The old and new sentences left between two consecutive anchors: a GrowOVER group. */
export function gaps(matches: IdenticalMatches): Array<{ oldIndices: number[]; newIndices: number[] }> {
  const out: Array<{ oldIndices: number[]; newIndices: number[] }> = [];
  for (let gap = 0; gap + 1 < matches.bounds.length; gap += 1) {
    const [oldStart, newStart] = matches.bounds[gap]!;
    const [oldEnd, newEnd] = matches.bounds[gap + 1]!;
    const oldIndices = range(oldStart + 1, oldEnd).filter((index) => !matches.oldTaken[index]);
    const newIndices = range(newStart + 1, newEnd).filter((index) => !matches.alignments[index]);
    if (oldIndices.length + newIndices.length > 0) out.push({ oldIndices, newIndices });
  }
  return out;
}

/**
 * Exact-match labeling: identical text is UNCHANGED; between consecutive anchors, leftover old
 * and new sentences replace each other in order (CHANGED); the rest are NEW or DELETED.
 */
export class ExactMatchLabeler implements SentenceLabeler {
  readonly name = 'exact-match';

  label(previous: readonly PreviousSentence[], current: readonly SplitSentence[]): SentenceLabeling {
    const matches = matchIdentical(previous, current);
    const { alignments, oldTaken } = matches;
    for (const { oldIndices, newIndices } of gaps(matches)) {
      newIndices.forEach((newIndex, position) => {
        const oldIndex = oldIndices[position];
        if (oldIndex === undefined) {
          alignments[newIndex] = { kind: 'NEW' };
        } else {
          alignments[newIndex] = { kind: 'CHANGED', previousId: previous[oldIndex]!.id };
          oldTaken[oldIndex] = true;
        }
      });
    }
    return finish(previous, alignments, oldTaken);
  }
}

/** Fills unlabeled new sentences as NEW and lists the old sentences nothing succeeded as DELETED. */
export function finish(
  previous: readonly PreviousSentence[],
  alignments: ReadonlyArray<SentenceAlignment | undefined>,
  oldTaken: readonly boolean[],
): SentenceLabeling {
  return {
    alignments: alignments.map((alignment) => alignment ?? { kind: 'NEW' }),
    deletedIds: previous.filter((_, index) => !oldTaken[index]).map((sentence) => sentence.id),
  };
}

function range(start: number, end: number): number[] {
  return Array.from({ length: Math.max(0, end - start) }, (_, offset) => start + offset);
}

/** Index pairs [oldIndex, newIndex] of one longest common subsequence, in increasing order. */
export function longestCommonSubsequence(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      lengths[i * width + j] = a[i] === b[j] ? lengths[(i + 1) * width + j + 1]! + 1 : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const pairs: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i += 1;
      j += 1;
    } else if (lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!) i += 1;
    else j += 1;
  }
  return pairs;
}
