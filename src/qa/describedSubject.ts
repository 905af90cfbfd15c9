/**
 * A question may name what it asks about by one of its facts instead of its name: "Who chairs the
 * directors at the ChatGPT developer?" asks of OpenAI, the Developer of ChatGPT; "Who leads the
 * body staging the 2024 Games in the French capital?" asks of Paris. The linked fact then is the
 * question's subject, never its answer (both were answered "OpenAI" and "Paris", adopted at 1.0).
 * Read here: the attribute's words, in lower case, end a phrase that a preposition opens, between
 * them only determiners and names ("of the ChatGPT developer", "in the French capital"; the "of"
 * of "the Bank of Japan's policy rate" is part of a name), and the words before the preposition
 * ask something of their own ("chairs the directors"). "Who is the
 * president of the French Senate?" names its attribute before the preposition, and asks for it.
 */
import { contentTerms } from '../text/language.js';

const PREPOSITIONS = new Set(['of', 'at', 'in', 'for', 'from', 'by', 'with', 'on', 'to', 'behind', 'within', 'inside', 'under']);
const DETERMINERS = new Set(['the', 'a', 'an', 'its', 'their', 'this', 'that']);
/** What may follow the phrase: the question's end, or a word that starts another part of it. */
const PHRASE_END = new Set([...PREPOSITIONS, 'and', 'or', 'that', 'which', 'who', 'when', 'where', 'since', 'before', 'after', 'during']);
/** At most this many determiners and names between the preposition and the attribute. */
const MAX_BETWEEN = 4;

const capitalised = (word: string | undefined): boolean => word !== undefined && /^[\p{Lu}\p{N}]/u.test(word);
/** A preposition between two capitalised words is part of a name ("the Bank of Japan's policy rate"). */
const inName = (words: readonly string[], at: number): boolean => capitalised(words[at - 1]) && capitalised(words[at + 1]);

const termsOf = (word: string): string[] => [...contentTerms(word)];

/** A question's subject named by a fact: the fact's value, the phrase that names it, and the question asked of the value instead. */
export interface DescribedSubject {
  value: string;
  phrase: string;
  askedOf: string;
}

/** The subject the question names by `fact` ("the ChatGPT developer": OpenAI), or null where it asks for the fact. */
export function describedBy(question: string, fact: { attribute: string; value: string }): DescribedSubject | null {
  const at = describingPhrase(question, fact.attribute);
  if (!at) return null;
  return { value: fact.value, phrase: question.slice(at.from, at.to), askedOf: `${question.slice(0, at.from)}${fact.value}${question.slice(at.to)}` };
}

/** Where a question names a thing by one of its facts: the phrase after the preposition ("the ChatGPT developer"), as offsets in the question. */
export interface DescribingPhrase {
  from: number;
  to: number;
}

/** Where the question names, by `attribute`, the thing it asks about (its subject) rather than asking for it; null where it does not. */
export function describingPhrase(question: string, attribute: string): DescribingPhrase | null {
  const wanted = contentTerms(attribute);
  if (wanted.size === 0) return null;
  const matches = [...question.matchAll(/[\p{L}\p{N}]+(?:['’.-][\p{L}\p{N}]+)*/gu)];
  const words = matches.map((match) => match[0]);
  // Written with a capital, the attribute's word is part of a name ("of World Chess Championship").
  const inAttribute = (word: string): boolean => {
    if (capitalised(word)) return false;
    const terms = termsOf(word);
    return terms.length > 0 && terms.every((term) => wanted.has(term));
  };
  for (let end = words.length - 1; end >= 0; end--) {
    if (!inAttribute(words[end]!)) continue;
    const next = words[end + 1]?.toLowerCase();
    if (next !== undefined && !PHRASE_END.has(next)) continue;
    let start = end;
    while (start > 0 && inAttribute(words[start - 1]!)) start--;
    const said = new Set(words.slice(start, end + 1).flatMap(termsOf));
    if ([...wanted].some((term) => !said.has(term))) continue;
    let at = start - 1;
    let named = false;
    while (at >= 0 && start - at <= MAX_BETWEEN && !(PREPOSITIONS.has(words[at]!.toLowerCase()) && !inName(words, at))) {
      const word = words[at]!;
      if (capitalised(word)) named = true;
      else if (!DETERMINERS.has(word.toLowerCase()) && !inName(words, at)) break;
      at--;
    }
    if (at < 1 || !named || !PREPOSITIONS.has(words[at]!.toLowerCase())) continue;
    if (contentTerms(words.slice(0, at).join(' ')).size > 0) return { from: matches[at + 1]!.index, to: matches[end]!.index + words[end]!.length };
  }
  return null;
}
