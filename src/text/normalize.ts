/** SQuAD's answer normalisation: NFKC, lowercase, no punctuation or symbols, no articles, single spaces. */
export function normalizeAnswer(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A text's normalised words (normalizeAnswer) between spaces, in which `holdsWords` finds a whole
 * word or run of words, not part of one ("chair" is not in "chairman").
 */
export function spacedWords(text: string): string {
  return ` ${normalizeAnswer(text)} `;
}

/** Whether `spaced` (spacedWords) holds the normalised `words` whole; never for no words. */
export function holdsWords(spaced: string, words: string): boolean {
  return words !== '' && spaced.includes(` ${words} `);
}

/** The text without its diacritics ("Élisabeth" → "Elisabeth"). */
export function withoutMarks(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '');
}

/** The words of a name as SQuAD normalises them, diacritics removed ("Élisabeth Borne", "Elisabeth Borne": the same two). */
export function nameWords(text: string): string[] {
  return withoutMarks(normalizeAnswer(text)).split(' ').filter(Boolean);
}

/** Lowercase letters and digits only, diacritics removed: what a diacritics-only or punctuation edit leaves equal. */
export function folded(value: string): string {
  return withoutMarks(value)
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}
