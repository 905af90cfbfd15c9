import { annotator } from '../text/language.js';

/** A sentence as it stands in one snapshot of an article. */
export interface SplitSentence {
  text: string;
  /** Whether a paragraph begins with this sentence, so the article text can be rebuilt. */
  startsParagraph: boolean;
}

/** Paragraphs are parted by a blank line (one that holds only whitespace). */
export const PARAGRAPH_BREAK = /\n\s*\n/;

/**
 * Splits article text into paragraphs (blank lines) and sentences. wink-nlp's tokenizer knows
 * abbreviations such as "U.S.", "Dr." and "e.g.", which a split on periods would break.
 */
export function splitSentences(text: string): SplitSentence[] {
  const sentences: SplitSentence[] = [];
  for (const paragraph of text.split(PARAGRAPH_BREAK)) {
    const flattened = paragraph.replace(/\s+/g, ' ').trim();
    if (flattened === '') continue;
    const found = annotator().readDoc(flattened).sentences().out();
    found.forEach((sentence, index) => {
      const trimmed = sentence.trim();
      if (trimmed !== '') sentences.push({ text: trimmed, startsParagraph: index === 0 });
    });
  }
  return sentences;
}

/** The form two sentence texts are compared in: Unicode-composed, one space, straight quotes. */
export function normalizeSentence(text: string): string {
  return text
    .normalize('NFC')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201C\u201D]/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}
