/**
 * Quiz snippets: web passages that ask a question and list its options ("What is the maximum fine
 * for …? Options: £2,000; £5,000; £10,000"), common where passages come from the web. The reader
 * reads an option from them as it would an answer, and the words around it look like an answer's
 * to the gate. A passage asking the question itself, followed by its options, gives the options,
 * not the answer.
 */
import { splitSentences } from '../ingest/sentenceSplitter.js';
import { contentTerms, termCoverage } from '../text/language.js';

/** A passage's question is the asked one when it holds at least this share of the asked content words. */
const SAME_QUESTION = 0.75;
/** Fewer asked content words than this say too little to tell one question from another. */
const MIN_ASKED_TERMS = 3;
/** Items of a list of options: three or more. */
const MIN_OPTIONS = 3;

/** An option is a few words ("£5,000", "Jupiter", "Prince Leopold"): a longer item is a clause of a sentence. */
const MAX_OPTION_WORDS = 3;

/**
 * Whether a text lists options: items of a few words separated by semicolons ("£2,000; £5,000;
 * £10,000"), a series closed by "or" ("Venus, Mars, Jupiter or Saturn"), after a label if any
 * ("Options: …"), or lettered items ("a) Lead b) Iron"). "It is Mars, whose iron oxide, dust, or
 * rust gives it colour" lists no options.
 */
export function listsOptions(text: string): boolean {
  if ((text.match(/(?:^|\s)[a-dA-D][).]\s/g) ?? []).length >= MIN_OPTIONS) return true;
  const body = text.replace(/^[^:]{1,30}:\s*/u, '');
  const items = body.split(/\s*;\s*|\s*,\s*(?:or\s+)?|\s+or\s+/u).filter((item) => /[\p{L}\p{N}]/u.test(item));
  return items.length >= MIN_OPTIONS && /;|\bor\b/u.test(body) && items.every((item) => item.trim().split(/\s+/u).length <= MAX_OPTION_WORDS);
}

/**
 * Why an answer read in `evidence` does not answer `question`: the answer is itself a list of
 * options, or the evidence asks the same question and lists its options after it. Null when neither.
 */
export function quizObjection(question: string, answer: string, evidence: string): string | null {
  if (listsOptions(answer)) return `"${answer}" reads as a list of options, not one answer`;
  const asked = contentTerms(question);
  if (asked.size < MIN_ASKED_TERMS) return null;
  const sentences = splitSentences(evidence);
  for (const [i, sentence] of sentences.entries()) {
    if (!sentence.text.trimEnd().endsWith('?') || termCoverage(asked, sentence.text) < SAME_QUESTION) continue;
    const next = sentences[i + 1]?.text;
    if (next !== undefined && listsOptions(next)) return `the words read ask the question themselves ("${sentence.text}") and list options, as a quiz does`;
  }
  return null;
}
