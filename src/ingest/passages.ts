import type { SplitSentence } from './sentenceSplitter.js';

/** GrowOVER's retrieval unit: up to 1,500 characters, 10 characters of overlap where text must be cut. */
export const PASSAGE_MAX_CHARS = 1500;
export const PASSAGE_OVERLAP_CHARS = 10;

/** Where one passage's text comes from: a sentence, or a window of one, at an offset of the passage. */
export interface PassagePiece {
  /** The sentence's position in the article version. */
  sentence: number;
  /** Where the piece starts in the passage's text. */
  offset: number;
  /** The part of the sentence it holds: [from, to) of the sentence's text. */
  from: number;
  to: number;
}

export interface PassageChunk {
  text: string;
  pieces: PassagePiece[];
}

/**
 * Cuts an article version into passages. Passages never cross a paragraph boundary, and
 * within a paragraph consecutive sentences are packed while they fit in `maxChars`; only a
 * sentence longer than that is cut inside, into windows overlapping by `overlapChars`. An
 * edit therefore changes only the passages of its own paragraph, and the others keep their
 * node (and their embedding) from one snapshot to the next.
 */
export function chunkPassages(sentences: readonly SplitSentence[], maxChars = PASSAGE_MAX_CHARS, overlapChars = PASSAGE_OVERLAP_CHARS): PassageChunk[] {
  const passages: PassageChunk[] = [];
  let current: PassageChunk = { text: '', pieces: [] };
  const flush = (): void => {
    if (current.text !== '') passages.push(current);
    current = { text: '', pieces: [] };
  };
  sentences.forEach((sentence, index) => {
    const length = sentence.text.length;
    if (sentence.startsParagraph) flush();
    if (length > maxChars) {
      flush();
      for (let start = 0; ; start += maxChars - overlapChars) {
        const end = Math.min(start + maxChars, length);
        passages.push({ text: sentence.text.slice(start, end), pieces: [{ sentence: index, offset: 0, from: start, to: end }] });
        if (start + maxChars >= length) break;
      }
      return;
    }
    if (current.text !== '' && current.text.length + 1 + length > maxChars) flush();
    const offset = current.text === '' ? 0 : current.text.length + 1;
    current.text = current.text === '' ? sentence.text : `${current.text} ${sentence.text}`;
    current.pieces.push({ sentence: index, offset, from: 0, to: length });
  });
  flush();
  return passages;
}
