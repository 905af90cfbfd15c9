/**
 * Links a question to the articles it is about (their titles named in it) and to the fact it
 * asks for (an attribute whose words the question holds), so the graph's exact history can
 * answer and inform the retrieval decision.
 */
import type { FactRecord } from '../graph/model.js';
import { normalizeAnswer } from '../text/normalize.js';
import { contentTerms } from '../text/language.js';

export interface LinkedSubject {
  articleId: string;
  title: string;
}

/** Titles as word sequences: lowercase, punctuation dropped ("Manchester United F.C." → "manchester united f c"). */
const words = (text: string): string => normalizeAnswer(text);

const MAX_TITLE_WORDS = 12;

export class SubjectIndex {
  private readonly byWords = new Map<string, LinkedSubject>();

  constructor(articles: ReadonlyArray<{ id: string; title: string }>) {
    for (const article of articles) {
      const subject = { articleId: article.id, title: article.title };
      const key = words(article.title);
      if (key !== '') this.byWords.set(key, subject);
      // "Manchester United F.C.", "Real Madrid CF": questions drop the club suffix.
      const short = key.replace(/\s+(f c|c f|cf|fc|inc|ltd|plc|co)$/, '');
      if (short !== key && short !== '' && !this.byWords.has(short)) this.byWords.set(short, subject);
    }
  }

  /** The articles whose titles the text names, longest first and not overlapping. */
  link(text: string): LinkedSubject[] {
    const tokens = words(text).split(' ').filter(Boolean);
    const taken = new Array<boolean>(tokens.length).fill(false);
    const found: LinkedSubject[] = [];
    for (let length = Math.min(MAX_TITLE_WORDS, tokens.length); length >= 1; length--) {
      for (let start = 0; start + length <= tokens.length; start++) {
        if (taken.slice(start, start + length).some(Boolean)) continue;
        const subject = this.byWords.get(tokens.slice(start, start + length).join(' '));
        if (!subject || found.some((f) => f.articleId === subject.articleId)) continue;
        found.push(subject);
        taken.fill(true, start, start + length);
      }
    }
    return found;
  }
}

/**
 * The fact whose attribute the question names: every content word of the attribute among the
 * question's words, the longest such attribute winning ("President-elect" over "President"
 * only when both words are asked).
 */
export function matchFact(facts: readonly FactRecord[], questionTerms: ReadonlySet<string>): FactRecord | null {
  let best: { fact: FactRecord; size: number } | null = null;
  for (const fact of facts) {
    const attribute = contentTerms(fact.attribute);
    if (attribute.size === 0 || ![...attribute].every((term) => questionTerms.has(term))) continue;
    if (!best || attribute.size > best.size) best = { fact, size: attribute.size };
  }
  return best?.fact ?? null;
}
