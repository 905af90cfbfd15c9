import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';

type Nlp = ReturnType<typeof winkNLP>;
let sharedNlp: Nlp | undefined;
let sharedAnnotator: Nlp | undefined;

/** One wink-nlp English instance with the full pipeline (sentences, POS, entities), for the process. */
export function annotator(): Nlp {
  sharedAnnotator ??= winkNLP(model);
  return sharedAnnotator;
}

/** One wink-nlp English instance for the process (its model takes a while to load). */
export function english(): Nlp {
  // Tokenisation only: the empty pipe skips sentence boundaries, POS, entities and the rest.
  sharedNlp ??= winkNLP(model, []);
  return sharedNlp;
}

/** The stems of the words of `text` that are not stop words: what a lexical match is judged on. */
export function contentTerms(text: string): Set<string> {
  const language = english();
  const { its } = language;
  const words = language
    .readDoc(text)
    .tokens()
    .filter((token) => token.out(its.type) === 'word' && !token.out(its.stopWordFlag));
  // wink-nlp's typings give `its.stem` its add-on signature, which `out` does not accept; it works like `its.normal`.
  const stem = its.stem as unknown as typeof its.normal;
  return new Set((words.out(stem) as string[]).map((term) => term.toLowerCase()));
}

/** The share of a query's content words (by stem) that `text` holds; 0 for a query without any. */
export function termCoverage(queryTerms: ReadonlySet<string>, text: string): number {
  if (queryTerms.size === 0) return 0;
  const terms = contentTerms(text);
  let held = 0;
  for (const term of queryTerms) if (terms.has(term)) held += 1;
  return held / queryTerms.size;
}
