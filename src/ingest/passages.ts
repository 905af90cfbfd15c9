import type { SplitSentence } from './sentenceSplitter.js';

/** GrowOVER's retrieval unit: up to 1,500 characters, 10 characters of overlap where text must be cut. */
export const PASSAGE_MAX_CHARS = 1500;
export const PASSAGE_OVERLAP_CHARS = 10;

/**
 * Cuts an article version into passages. Passages never cross a paragraph boundary, and
 * within a paragraph consecutive sentences are packed while they fit in `maxChars`; only a
 * sentence longer than that is cut inside, into windows overlapping by `overlapChars`. An
 * edit therefore changes only the passages of its own paragraph, and the others keep their
 * node (and their embedding) from one snapshot to the next.
 */
export function chunkPassages(sentences: readonly SplitSentence[], maxChars = PASSAGE_MAX_CHARS, overlapChars = PASSAGE_OVERLAP_CHARS): string[] {
  const passages: string[] = [];
  let current = '';
  const flush = (): void => {
    if (current !== '') passages.push(current);
    current = '';
  };
  for (const sentence of sentences) {
    if (sentence.startsParagraph) flush();
    if (sentence.text.length > maxChars) {
      flush();
      for (let start = 0; ; start += maxChars - overlapChars) {
        passages.push(sentence.text.slice(start, start + maxChars));
        if (start + maxChars >= sentence.text.length) break;
      }
    } else if (current !== '' && current.length + 1 + sentence.text.length > maxChars) {
      flush();
      current = sentence.text;
    } else {
      current = current === '' ? sentence.text : `${current} ${sentence.text}`;
    }
  }
  flush();
  return passages;
}
